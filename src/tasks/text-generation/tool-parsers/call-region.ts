// A call's region of text: the scan of the object's own keys (its name, where its arguments' value
// lies), and for a call written as a JSON object, the scan of its braces.

export const WHITESPACE = new Set([" ", "\t", "\n", "\r"]);

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
export function scanKeys(region: Region, body: string, argumentKeys: readonly string[]): void {
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
