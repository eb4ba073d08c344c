// One tool call's JSON object, read as it is written — the part every tool-call format shares
// (hermes-tool-reader.ts, llama3-tool-reader.ts): the name is sent once whole, as soon as it
// is written (vLLM's readers: `"name"\s*:\s*"…"`), then the arguments as they are written —
// the value after the arguments' key, read to its balanced end (braces in strings ignored), so
// exactly that value is sent, whatever follows it.
import type { ToolCall, ToolCallDelta, ToolReading } from "./tool-call-reader";

const NAME = /"name"\s*:\s*"([^"]+)"/;
const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/** A call's text so far and how far its arguments have been read. */
export interface Region {
  /** The call begun when its name was read (an index into `calls`). */
  call?: number;
  /** Where the arguments' value may start (after its key and colon). */
  valueAt?: number;
  /** How much of the text the arguments' reader has seen. */
  read: number;
  value: { kind: "pending" } | { kind: "nested"; open: string; close: string; depth: number; inString: boolean; escaped: boolean } | { kind: "scalar" } | { kind: "ended" };
}

export const newRegion = (): Region => ({ read: 0, value: { kind: "pending" } });

/** The calls read out of a text's call regions, and what each reading sends. */
export class RegionCalls {
  readonly calls: ToolCall[] = [];
  reading: ToolReading = { content: "", calls: [] };

  /**
   * `argumentsKey`: the key before a call's arguments (`"arguments":`; Llama's `"parameters":`
   * too). `keyed`: an object is a call only once that key is written too (a Llama answer may be
   * JSON that happens to have a "name"); otherwise the name alone makes it one.
   */
  constructor(
    private readonly newId: () => string,
    private readonly argumentsKey: RegExp,
    private readonly keyed = false,
  ) {}

  /** Starts a reading (what one push or end sends). */
  next(): ToolReading {
    return (this.reading = { content: "", calls: [] });
  }

  /** Reads a call's name (sent once whole), then its arguments as far as `body` goes. */
  read(region: Region, body: string): void {
    if (region.call === undefined) {
      const name = NAME.exec(body);
      if (name === null) return;
      if (this.keyed && !this.argumentsKey.test(body)) return;
      region.call = this.calls.length;
      const call: ToolCall = { id: this.newId(), type: "function", function: { name: name[1]!, arguments: "" } };
      this.calls.push(call);
      this.reading.calls.push({ index: region.call, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } });
    }
    if (region.valueAt === undefined) {
      const marker = this.argumentsKey.exec(body);
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
      let value = body.slice(region.valueAt).trim();
      if (value.endsWith("}")) value = value.slice(0, -1).trimEnd();
      this.append(region, unquoted(value));
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
