// Forced tool calls (a named tool_choice, or "required") read out of the JSON the constrained
// sampler writes, as it arrives.
import { WHITESPACE } from "./call-region";
import { type ForcedToolMode, type ToolCall, type ToolCallDelta, toolCallId } from "./tool-parser";

/**
 * The structure between a list item's start and its name's first character, then between the name
 * and its arguments.
 */
const BEFORE_NAME = ["{", '"name"', ":", '"'];
const BEFORE_ARGUMENTS = [",", '"parameters"', ":"];

type State =
  | { at: "open" }
  | {
      at: "literal";
      tokens: readonly string[];
      token: number;
      offset: number;
      after: "name" | "arguments";
    }
  | { at: "name"; name: string }
  | { at: "arguments"; depth: number; inString: boolean; escaped: boolean; started: boolean }
  | { at: "between" }
  | { at: "closed" };

/**
 * The sampler was constrained to JSON (tool-plan.ts builds the schema), so the text has one of two
 * forms:
 *   - a named tool_choice: the function's arguments, the whole text;
 *   - tool_choice "required": vLLM's list `[{"name": "…", "parameters": {…}}, …]`.
 * The same reader frames the stream's deltas and the whole response's calls, so the streamed
 * arguments joined equal the response's byte for byte: each call's arguments are the exact text the
 * model wrote for them (not re-serialized, as vLLM's json.dumps would).
 */
export class ToolCallReader {
  /** The calls so far; the last one's arguments may be unfinished. */
  readonly calls: ToolCall[] = [];
  private state: State = { at: "open" };
  private deltas: ToolCallDelta[] = [];

  /** `newId`: each call's id (chat: vLLM's chatcmpl-tool-…; the Responses API: call_…). */
  constructor(
    private readonly mode: ForcedToolMode,
    private readonly newId: () => string = toolCallId,
  ) {}

  /**
   * The next piece of generated text → the deltas it completes (consecutive ones of a call merged).
   */
  push(text: string): ToolCallDelta[] {
    this.deltas = [];
    if (this.mode.kind === "named") {
      if (this.calls.length === 0) this.begin(this.mode.name);
      if (text !== "") this.append(text);
    } else {
      for (const char of text) this.read(char);
    }
    return this.deltas;
  }

  private begin(name: string): void {
    const call: ToolCall = {
      id: this.newId(),
      type: "function",
      function: { name, arguments: "" },
    };
    this.calls.push(call);
    this.deltas.push({
      index: this.calls.length - 1,
      id: call.id,
      type: "function",
      function: { name, arguments: "" },
    });
  }

  private append(text: string): void {
    const index = this.calls.length - 1;
    this.calls[index]!.function.arguments += text;
    const last = this.deltas.at(-1);
    if (last?.index === index) last.function.arguments += text;
    else this.deltas.push({ index, function: { arguments: text } });
  }

  /** One character of the `required` list. Text that leaves the expected form ends the reading. */
  private read(char: string): void {
    const state = this.state;
    switch (state.at) {
      case "open":
        if (char === "[")
          this.state = { at: "literal", tokens: BEFORE_NAME, token: 0, offset: 0, after: "name" };
        else if (!WHITESPACE.has(char)) this.state = { at: "closed" };
        return;
      case "literal": {
        if (state.offset === 0 && WHITESPACE.has(char)) return;
        const token = state.tokens[state.token]!;
        if (char !== token[state.offset]) {
          this.state = { at: "closed" };
          return;
        }
        state.offset += 1;
        if (state.offset < token.length) return;
        state.token += 1;
        state.offset = 0;
        if (state.token < state.tokens.length) return;
        if (state.after === "name") {
          this.state = { at: "name", name: "" };
        } else {
          this.state = {
            at: "arguments",
            depth: 0,
            inString: false,
            escaped: false,
            started: false,
          };
        }
        return;
      }
      case "name":
        // Tool names are letters, digits, "_" and "-" (the request schema's rule): no escapes.
        if (char !== '"') {
          state.name += char;
          return;
        }
        this.begin(state.name);
        this.state = {
          at: "literal",
          tokens: BEFORE_ARGUMENTS,
          token: 0,
          offset: 0,
          after: "arguments",
        };
        return;
      case "arguments":
        if (state.inString) {
          if (state.escaped) state.escaped = false;
          else if (char === "\\") state.escaped = true;
          else if (char === '"') state.inString = false;
          this.append(char);
          return;
        }
        if (state.depth === 0 && WHITESPACE.has(char)) return;
        if (state.depth === 0 && state.started && char === "}") {
          this.state = { at: "between" };
          return;
        }
        if (char === '"') state.inString = true;
        else if (char === "{" || char === "[") state.depth += 1;
        else if (char === "}" || char === "]") state.depth -= 1;
        state.started = true;
        this.append(char);
        return;
      case "between":
        if (char === ",")
          this.state = { at: "literal", tokens: BEFORE_NAME, token: 0, offset: 0, after: "name" };
        else if (!WHITESPACE.has(char)) this.state = { at: "closed" };
        return;
      case "closed":
        return;
    }
  }
}
