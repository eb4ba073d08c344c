// The calls read out of a text's call regions, sent as they are written: each name once whole,
// then its arguments' value as far as it goes.
import { type Region, scanKeys, WHITESPACE } from "./call-region";
import type { ToolCall, ToolCallDelta, ToolReading } from "./tool-parser";

/**
 * The calls read out of a text's call regions, and what each reading sends.
 *
 * Shared by the hermes, llama3-json, mistral and pythonic readers. The object's own keys are found
 * by a scan that skips nested values and strings, so a "name" inside the arguments is not the
 * call's; the name is sent once whole, as soon as it is written, then the arguments as they are
 * written — the value after the arguments' key, read to its balanced end (braces in strings
 * ignored), so exactly that value is sent, whatever follows it.
 */
export class RegionCalls {
  readonly calls: ToolCall[] = [];
  reading: ToolReading = { content: "", calls: [] };

  /**
   * `argumentKeys`: the keys a call's arguments may go under (`arguments`; Llama's `parameters`
   * too). `keyed`: an object is a call only once such a key is written too (a Llama answer may be
   * JSON that happens to have a "name"); otherwise the name alone makes it one.
   */
  constructor(
    private readonly newId: () => string,
    private readonly argumentKeys: readonly string[],
    private readonly keyed = false,
  ) {}

  /** Starts a reading (what one push or end sends). */
  next(): ToolReading {
    return (this.reading = { content: "", calls: [] });
  }

  /** Reads a call's name (sent once whole), then its arguments as far as `body` goes. */
  read(region: Region, body: string): void {
    scanKeys(region, body, this.argumentKeys);
    if (region.call === undefined) {
      if (region.name === undefined) return;
      if (this.keyed && region.valueAt === undefined) return;
      region.call = this.calls.length;
      const call: ToolCall = {
        id: this.newId(),
        type: "function",
        function: { name: region.name, arguments: "" },
      };
      this.calls.push(call);
      this.reading.calls.push({
        index: region.call,
        id: call.id,
        type: "function",
        function: { name: call.function.name, arguments: "" },
      });
    }
    if (region.valueAt === undefined) return;
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
        region.value = {
          kind: "nested",
          open: char,
          close: char === "{" ? "}" : "]",
          depth: 1,
          inString: false,
          escaped: false,
        };
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
   * A region's end (`closed` false: generation ended inside it). No name: `raw` goes to the
   * content, as written. A scalar value is sent whole (a string holding the arguments'
   * serialized JSON as that JSON); no arguments at all: `{}`.
   */
  end(region: Region, body: string, closed: boolean, raw: string): void {
    if (region.call === undefined) {
      this.reading.content += raw;
      return;
    }
    if (region.value.kind === "scalar" && region.valueAt !== undefined) {
      this.append(
        region,
        unquoted(body.slice(region.valueAt, region.valueEnd ?? body.length).trim()),
      );
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
