// tool_choice "auto" for a model that writes its calls in the Hermes format (Qwen 2.5 and 3,
// Hermes 2 Pro and 3, …): `<tool_call>{"name": "…", "arguments": {…}}</tool_call>`, read as
// vLLM's hermes parser reads it (vllm-project/vllm: vllm/tool_parsers/hermes_tool_parser.py,
// Hermes2ProToolParser):
//   - the text before the first <tool_call> is the message's content; a suffix that may be the
//     start of the tag is held back until it is known not to be;
//   - a call's name is sent as soon as it is written, then its arguments as they are written:
//     the value after "arguments", read to its balanced end (braces in strings ignored);
//   - text between and after the calls is dropped.
// Two differences, both so that the streamed deltas joined equal the whole response:
//   - the arguments are the JSON text the model wrote (vLLM's whole-response path re-serializes
//     them with json.dumps, its stream sends them as written);
//   - a <tool_call> region with no name in it is kept, as written, in the content (vLLM's
//     stream drops it; its whole-response path turns the whole output into content).
import type { ToolCall, ToolCallDelta, ToolReading, ToolTextReader } from "./tool-call-reader";

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";
const NAME = /"name"\s*:\s*"([^"]+)"/;
const ARGUMENTS = /"arguments"\s*:/;
const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/** The length of the longest suffix of `text` that is a proper prefix of `tag` (vLLM's partial_tag_overlap). */
export function partialTagOverlap(text: string, tag: string): number {
  for (let length = Math.min(text.length, tag.length - 1); length > 0; length -= 1) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/** An open <tool_call> region: its text so far and how far its arguments have been read. */
interface Region {
  body: string;
  /** The call begun when its name was read (an index into `calls`). */
  call?: number;
  /** Where the arguments' value may start (after `"arguments":`). */
  valueAt?: number;
  /** How much of the body the arguments' reader has seen. */
  read: number;
  value: { kind: "pending" } | { kind: "nested"; open: string; close: string; depth: number; inString: boolean; escaped: boolean } | { kind: "scalar" } | { kind: "ended" };
}

export class HermesToolReader implements ToolTextReader {
  readonly calls: ToolCall[] = [];
  /** Text not yet read: a suffix that may begin a tag. */
  private held = "";
  private region: Region | undefined;
  /** Whether a <tool_call> was seen: text outside the calls then counts for nothing. */
  private calling = false;
  private reading: ToolReading = { content: "", calls: [] };

  constructor(private readonly newId: () => string) {}

  push(text: string): ToolReading {
    this.reading = { content: "", calls: [] };
    this.held += text;
    this.scan(false);
    return this.reading;
  }

  end(): ToolReading {
    this.reading = { content: "", calls: [] };
    this.scan(true);
    return this.reading;
  }

  private scan(final: boolean): void {
    for (;;) {
      if (this.region === undefined) {
        const at = this.held.indexOf(OPEN);
        if (at === -1) {
          const keep = final ? 0 : partialTagOverlap(this.held, OPEN);
          this.text(this.held.slice(0, this.held.length - keep));
          this.held = this.held.slice(this.held.length - keep);
          return;
        }
        this.text(this.held.slice(0, at));
        this.held = this.held.slice(at + OPEN.length);
        this.calling = true;
        this.region = { body: "", read: 0, value: { kind: "pending" } };
      }
      const region = this.region;
      const from = Math.max(0, region.body.length - (CLOSE.length - 1));
      region.body += this.held;
      this.held = "";
      const close = region.body.indexOf(CLOSE, from);
      if (close === -1) {
        // Read no further than what is surely the call's: a partial </tool_call> may follow.
        const stable = final ? region.body.length : region.body.length - partialTagOverlap(region.body, CLOSE);
        this.readCall(region, region.body.slice(0, stable));
        if (final) this.endCall(region, region.body, false);
        return;
      }
      const body = region.body.slice(0, close);
      this.held = region.body.slice(close + CLOSE.length);
      this.readCall(region, body);
      this.endCall(region, body, true);
      this.region = undefined;
    }
  }

  /** Text outside the calls: the content before the first one, nothing after. */
  private text(text: string): void {
    if (!this.calling) this.reading.content += text;
  }

  /** Reads a call's name (sent once whole), then its arguments as far as `body` goes. */
  private readCall(region: Region, body: string): void {
    if (region.call === undefined) {
      const name = NAME.exec(body);
      if (name === null) return;
      region.call = this.calls.length;
      const call: ToolCall = { id: this.newId(), type: "function", function: { name: name[1]!, arguments: "" } };
      this.calls.push(call);
      this.reading.calls.push({ index: region.call, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } });
    }
    if (region.valueAt === undefined) {
      const marker = ARGUMENTS.exec(body);
      if (marker === null) return;
      region.valueAt = marker.index + marker[0].length;
      region.read = region.valueAt;
    }
    let written = "";
    while (region.read < body.length) {
      const value = region.value;
      if (value.kind === "scalar" || value.kind === "ended") break;
      const char = body[region.read]!;
      region.read += 1;
      if (value.kind === "pending") {
        if (WHITESPACE.has(char)) continue;
        if (char !== "{" && char !== "[") {
          region.value = { kind: "scalar" };
          break;
        }
        region.value = { kind: "nested", open: char, close: char === "{" ? "}" : "]", depth: 1, inString: false, escaped: false };
        written += char;
        continue;
      }
      written += char;
      if (value.inString) {
        if (value.escaped) value.escaped = false;
        else if (char === "\\") value.escaped = true;
        else if (char === '"') value.inString = false;
      } else if (char === '"') value.inString = true;
      else if (char === value.open) value.depth += 1;
      else if (char === value.close && --value.depth === 0) region.value = { kind: "ended" };
    }
    this.append(region, written);
  }

  /**
   * A region's end (its </tool_call>, or the end of generation when `closed` is false). No name:
   * the region is content, as written. A scalar value is sent whole (a string holding the
   * arguments' serialized JSON as that JSON); no arguments at all: `{}`.
   */
  private endCall(region: Region, body: string, closed: boolean): void {
    if (region.call === undefined) {
      this.reading.content += OPEN + body + (closed ? CLOSE : "");
      return;
    }
    if (region.value.kind === "scalar" && region.valueAt !== undefined) {
      let raw = body.slice(region.valueAt).trim();
      if (raw.endsWith("}")) raw = raw.slice(0, -1).trimEnd();
      this.append(region, unquoted(raw));
    } else if (region.valueAt === undefined && closed) {
      this.append(region, "{}");
    }
  }

  private append(region: Region, text: string): void {
    if (text === "" || region.call === undefined) return;
    const index = region.call;
    this.calls[index]!.function.arguments += text;
    const last = this.reading.calls.at(-1);
    if (last?.index === index) last.function.arguments += text;
    else this.reading.calls.push({ index, function: { arguments: text } } satisfies ToolCallDelta);
  }
}

/**
 * Arguments a model wrote as a string of serialized JSON (Granite 4's habit) → that JSON, as
 * vLLM passes it through; any other value as written (a bare string stays a JSON string).
 */
function unquoted(raw: string): string {
  if (!raw.startsWith('"')) return raw;
  try {
    const value: unknown = JSON.parse(raw);
    if (typeof value !== "string") return raw;
    const inner: unknown = JSON.parse(value);
    return inner !== null && typeof inner === "object" ? value : raw;
  } catch {
    return raw;
  }
}
