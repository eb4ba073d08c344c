// tool_choice "auto" for models that call in Python syntax, a list of calls with keyword arguments
// (Llama 3.2, Llama 4, ToolACE, …), read as vLLM's pythonic parser reads them.
import { newRegion } from "./call-region";
import { partialTagOverlap, RegionReader } from "./region-reader";

/** A call read whole; `end`: where the text after its `)` starts. */
interface ReadCall {
  name: string;
  arguments: string;
  end: number;
}

/** The reading of a list so far: the calls it closed, and whether it may still go on. */
interface ListReading {
  calls: ReadCall[];
  state: "open" | "closed" | "invalid";
}

class Incomplete extends Error {}
class Invalid extends Error {}

const IDENTIFIER = /[A-Za-z_][A-Za-z0-9_]*/y;
const NUMBER = /-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/y;
const JSON_NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;
const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  b: "\b",
  f: "\f",
  "0": "\0",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "\n": "",
};

/**
 * A recursive-descent reading of a Python list of calls, JSON written for each call's
 * arguments; from the list's start, or from `at`, right after a call already read.
 */
class PythonicList {
  readonly calls: ReadCall[] = [];

  constructor(
    private readonly text: string,
    private at = 0,
  ) {}

  read(): ListReading {
    try {
      if (this.at === 0) {
        this.expect("[");
        this.space();
        if (this.peek() === "]") throw new Invalid(); // no calls: not a call list
        this.calls.push(this.call());
      }
      for (;;) {
        this.space();
        const next = this.next();
        if (next === "]") return { calls: this.calls, state: "closed" };
        if (next !== ",") throw new Invalid();
        this.space();
        this.calls.push(this.call());
      }
    } catch (error) {
      if (error instanceof Incomplete) return { calls: this.calls, state: "open" };
      if (error instanceof Invalid) return { calls: this.calls, state: "invalid" };
      throw error;
    }
  }

  private call(): ReadCall {
    const name = this.identifier();
    this.space();
    this.expect("(");
    const pairs: string[] = [];
    for (;;) {
      this.space();
      if (this.peek() === ")") {
        this.at += 1;
        return { name, arguments: `{${pairs.join(", ")}}`, end: this.at };
      }
      const key = this.identifier();
      this.space();
      this.expect("=");
      this.space();
      pairs.push(`${JSON.stringify(key)}: ${this.value()}`);
      this.space();
      const next = this.peek();
      if (next === ",") this.at += 1;
      else if (next !== ")") throw new Invalid();
    }
  }

  /** A literal, as JSON. */
  private value(): string {
    const char = this.peek();
    if (char === "'" || char === '"') return JSON.stringify(this.string());
    if (char === "[") return `[${this.items("]", () => this.value()).join(", ")}]`;
    if (char === "{") return `{${this.items("}", () => this.entry()).join(", ")}}`;
    if (char === "-" || char === "." || (char >= "0" && char <= "9")) return this.number();
    const word = this.identifier();
    const literal = ({ True: "true", False: "false", None: "null" } as Record<string, string>)[
      word
    ];
    if (literal === undefined) throw new Invalid();
    return literal;
  }

  private entry(): string {
    const char = this.peek();
    const key =
      char === "'" || char === '"'
        ? this.string()
        : char === "-" || (char >= "0" && char <= "9")
          ? this.number()
          : undefined;
    if (key === undefined) throw new Invalid();
    this.space();
    this.expect(":");
    this.space();
    return `${JSON.stringify(key)}: ${this.value()}`;
  }

  /** Items up to `close`, comma-separated (a trailing comma allowed, as Python allows it). */
  private items(close: string, item: () => string): string[] {
    this.at += 1;
    const items: string[] = [];
    for (;;) {
      this.space();
      if (this.peek() === close) {
        this.at += 1;
        return items;
      }
      items.push(item());
      this.space();
      const next = this.peek();
      if (next === ",") this.at += 1;
      else if (next !== close) throw new Invalid();
    }
  }

  private string(): string {
    const quote = this.next();
    let value = "";
    for (;;) {
      const char = this.next();
      if (char === quote) return value;
      if (char === "\n") throw new Invalid();
      if (char !== "\\") {
        value += char;
        continue;
      }
      const escaped = this.next();
      const hex = { x: 2, u: 4, U: 8 }[escaped];
      if (hex !== undefined) {
        const digits = this.text.slice(this.at, this.at + hex);
        if (digits.length < hex) throw new Incomplete();
        if (!/^[0-9a-fA-F]+$/.test(digits)) throw new Invalid();
        this.at += hex;
        value += String.fromCodePoint(parseInt(digits, 16));
      } else value += ESCAPES[escaped] ?? `\\${escaped}`;
    }
  }

  private number(): string {
    NUMBER.lastIndex = this.at;
    const match = NUMBER.exec(this.text);
    if (match === null) throw this.at >= this.text.length - 1 ? new Incomplete() : new Invalid();
    this.at += match[0].length;
    // More digits, or an exponent begun at the end, may follow.
    if (this.at >= this.text.length || /^[eE][+-]?$/.test(this.text.slice(this.at)))
      throw new Incomplete();
    return JSON_NUMBER.test(match[0]) ? match[0] : JSON.stringify(Number(match[0]));
  }

  private identifier(): string {
    IDENTIFIER.lastIndex = this.at;
    const match = IDENTIFIER.exec(this.text);
    if (match === null) throw this.at >= this.text.length ? new Incomplete() : new Invalid();
    this.at += match[0].length;
    if (this.at >= this.text.length) throw new Incomplete(); // the name may go on
    return match[0];
  }

  private space(): void {
    while (this.at < this.text.length && " \t\n\r".includes(this.text[this.at]!)) this.at += 1;
  }

  private peek(): string {
    if (this.at >= this.text.length) throw new Incomplete();
    return this.text[this.at]!;
  }

  private next(): string {
    const char = this.peek();
    this.at += 1;
    return char;
  }

  private expect(char: string): void {
    if (this.next() !== char) throw new Invalid();
  }
}

const PYTHON_START = "<|python_start|>";
const PYTHON_END = "<|python_end|>";

/**
 * The format: `[get_weather(city='Paris', days=3), now()]`. An output that starts with `[` and is
 * such a list is calls; any other output is content. Each argument is a literal (a string, number,
 * True/False/None, or a list or dict of them) and becomes JSON, as vLLM's `json.dumps` writes it
 * (`", "` and `": "` between items). Llama 4's form (vLLM's llama4_pythonic) may wrap the list in
 * <|python_start|> … <|python_end|>, which are dropped. Where this reader answers otherwise than
 * vLLM, so that the streamed deltas joined equal the whole response:
 *   - a call goes out whole once its `)` is written (vLLM streams its arguments as they parse);
 *   - a number keeps the digits written where they are JSON (vLLM's goes through a Python float);
 *   - text beyond ASCII stays as written (vLLM's llama4_pythonic escapes it as \uXXXX);
 *   - a list cut short keeps the calls it closed (vLLM's whole-response path makes it content).
 */
export class PythonicToolReader extends RegionReader {
  /** Everything written so far; a list is read on from right after its last call read. */
  private text = "";
  private resume = 0;
  /**
   * "list" while the output may still be a call list; "content" once it is not; "done" after the
   * list.
   */
  private mode: "undecided" | "list" | "content" | "done" = "undecided";
  /** Llama 4's tags were around the output: <|python_end|> is dropped wherever it comes. */
  private tags = false;

  /**
   * `tagged`: Llama 4's form (vLLM's llama4_pythonic): an output that starts with
   * <|python_start|> is read without it, and without any <|python_end|>.
   */
  constructor(
    newId: () => string,
    private readonly tagged = false,
  ) {
    super(newId, ["arguments"]);
  }

  protected scan(final: boolean): void {
    let added = this.held;
    this.held = "";
    if (this.tagged && this.mode === "undecided" && !this.tags) {
      // Not yet known whether the output starts with the tag: wait for more.
      if (!final && PYTHON_START.startsWith(added)) {
        this.held = added;
        return;
      }
      this.tags = added.startsWith(PYTHON_START);
      if (this.tags) added = added.slice(PYTHON_START.length);
    }
    if (this.tags) {
      added = added.replaceAll(PYTHON_END, "");
      const keep = final ? 0 : partialTagOverlap(added, PYTHON_END);
      this.held = added.slice(added.length - keep);
      added = added.slice(0, added.length - keep);
    }
    this.text += added;
    if (this.mode === "undecided" && this.text !== "")
      this.mode = this.text.startsWith("[") ? "list" : "content";
    if (this.mode === "content") {
      this.out.reading.content += added;
      return;
    }
    if (this.mode !== "list") return;
    const { calls, state } = new PythonicList(this.text, this.resume).read();
    this.resume = calls.at(-1)?.end ?? this.resume;
    for (const call of calls) {
      const body = `{"name": ${JSON.stringify(call.name)}, "arguments": ${call.arguments}}`;
      const region = newRegion();
      this.out.read(region, body);
      this.out.end(region, body, true, "");
    }
    if (this.out.calls.length === 0 && (state === "invalid" || (final && state !== "closed"))) {
      // Not a call list after all: all of it is content.
      this.mode = "content";
      this.out.reading.content += this.text;
    } else if (state !== "open") this.mode = "done";
  }
}
