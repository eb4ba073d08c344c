// One tool call's JSON object, read as it is written: the part every tool-call format shares.
import type { ToolCall, ToolCallDelta, ToolReading, ToolTextReader } from "./tool-parser";

const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

/**
 * The length of the longest suffix of `text` that is a proper prefix of `tag` (vLLM's
 * partial_tag_overlap).
 */
export function partialTagOverlap(text: string, tag: string): number {
  for (let length = Math.min(text.length, tag.length - 1); length > 0; length -= 1) {
    if (text.endsWith(tag.slice(0, length))) return length;
  }
  return 0;
}

/** Where the scan of an object's own keys stands (depth 1 is the object's own level). */
interface KeyScan {
  at: number;
  depth: number;
  inString: boolean;
  escaped: boolean;
  stringStart: number;
  /** The object's last string, while it may still be a key (before its colon). */
  key?: string;
  /** After `"name":`, until its value. */
  nameNext: boolean;
}

/** A call's text so far and how far its arguments have been read. */
export interface Region {
  /** The call begun when its name was read (an index into `calls`). */
  call?: number;
  /** The object's own "name", once its string is whole. */
  name?: string;
  /**
   * Where the arguments' value may start (after its key and colon), and where it ends when known.
   */
  valueAt?: number;
  valueEnd?: number;
  /** How much of the text the arguments' reader has seen. */
  read: number;
  value:
    | { kind: "pending" }
    | {
        kind: "nested";
        open: string;
        close: string;
        depth: number;
        inString: boolean;
        escaped: boolean;
      }
    | { kind: "scalar" }
    | { kind: "ended" };
  keys: KeyScan;
}

export const newRegion = (): Region => ({
  read: 0,
  value: { kind: "pending" },
  keys: { at: 0, depth: 0, inString: false, escaped: false, stringStart: 0, nameNext: false },
});

/**
 * Reads the object's own keys in `body` as far as it goes: its name and where its arguments' value
 * starts and ends.
 */
function scanKeys(region: Region, body: string, argumentKeys: readonly string[]): void {
  const scan = region.keys;
  for (
    ;
    scan.at < body.length && (region.name === undefined || region.valueEnd === undefined);
    scan.at += 1
  ) {
    const char = body[scan.at]!;
    if (scan.inString) {
      if (scan.escaped) scan.escaped = false;
      else if (char === "\\") scan.escaped = true;
      else if (char === '"') {
        scan.inString = false;
        if (scan.depth !== 1) continue;
        const text = stringValue(body.slice(scan.stringStart, scan.at + 1));
        if (scan.nameNext) {
          scan.nameNext = false;
          if (text !== undefined && text !== "") region.name ??= text;
        } else scan.key = text;
      }
      continue;
    }
    if (WHITESPACE.has(char)) continue;
    if (char === '"') {
      scan.inString = true;
      scan.stringStart = scan.at;
      continue;
    }
    const key = scan.key;
    scan.key = undefined;
    if (scan.depth === 1 && char === ":") {
      if (key === "name") scan.nameNext = true;
      else if (key !== undefined && argumentKeys.includes(key) && region.valueAt === undefined)
        region.valueAt = region.read = scan.at + 1;
      continue;
    }
    scan.nameNext = false;
    if (char === "{" || char === "[") scan.depth += 1;
    else if (char === "}" || char === "]") scan.depth -= 1;
    // The arguments' value ends at the object's next comma or its close.
    if (
      region.valueAt !== undefined &&
      region.valueEnd === undefined &&
      ((scan.depth === 1 && char === ",") || scan.depth === 0)
    )
      region.valueEnd = scan.at;
  }
}

/** A JSON string's value (undefined: not a valid one). */
function stringValue(literal: string): string | undefined {
  try {
    return JSON.parse(literal) as string;
  } catch {
    return undefined;
  }
}

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

/** A call written as a JSON object: its text so far, and where the scan of its braces stands. */
export interface ObjectRegion extends Region {
  body: string;
  depth: number;
  inString: boolean;
  escaped: boolean;
}

export const newObjectRegion = (): ObjectRegion => ({
  ...newRegion(),
  body: "",
  depth: 0,
  inString: false,
  escaped: false,
});

/**
 * One more character of an object region (its first is its `{`): true when it closes the object.
 */
export function objectCloses(region: ObjectRegion, char: string): boolean {
  region.body += char;
  if (region.inString) {
    if (region.escaped) region.escaped = false;
    else if (char === "\\") region.escaped = true;
    else if (char === '"') region.inString = false;
  } else if (char === '"') region.inString = true;
  else if (char === "{") region.depth += 1;
  else if (char === "}") return --region.depth === 0;
  return false;
}

/**
 * A tool-call format's reader: each push adds to `held`, the text not yet read, and `scan`
 * reads what it can of it into `out` (`final`: the generation has ended).
 */
export abstract class RegionReader implements ToolTextReader {
  protected readonly out: RegionCalls;
  protected held = "";

  constructor(newId: () => string, argumentKeys: readonly string[], keyed = false) {
    this.out = new RegionCalls(newId, argumentKeys, keyed);
  }

  get calls(): readonly ToolCall[] {
    return this.out.calls;
  }

  push(text: string): ToolReading {
    const reading = this.out.next();
    this.held += text;
    this.scan(false);
    return reading;
  }

  end(): ToolReading {
    const reading = this.out.next();
    this.scan(true);
    return reading;
  }

  protected abstract scan(final: boolean): void;
}
