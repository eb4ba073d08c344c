// tool_choice "auto" for Llama 3.1–3.3 and 4 models, which call by writing JSON objects (vLLM's
// llama3_json / llama4_json parser: vllm-project/vllm
// vllm/entrypoints/openai/tool_parsers/llama_tool_parser.py, Llama3JsonToolParser, and its
// tests, tests/tool_parsers/test_llama3_json_tool_parser.py): `{"name": "…", "parameters": {…}}`
// ("arguments" is taken too), perhaps after `<|python_tag|>`, several separated by `;` or
// white space. An object is a call once both its name and its parameters' key are written; its
// name is sent then, its arguments as written. Text before the first call is content (vLLM's
// whole-response path drops it, its stream only calls when the output starts with the JSON);
// after a call, text and objects that are not calls are dropped, as vLLM drops them. An object
// that is not a call, before any call, is content as written, sent when it closes.
import type { ToolCall, ToolReading, ToolTextReader } from "./tool-call-reader";
import { partialTagOverlap } from "./hermes-tool-reader";
import { newRegion, RegionCalls, type Region } from "./tool-call-regions";

const PYTHON_TAG = "<|python_tag|>";

/** An object being written: its text, and where the scan of its braces stands. */
interface ObjectRegion extends Region {
  body: string;
  depth: number;
  inString: boolean;
  escaped: boolean;
}

export class Llama3JsonToolReader implements ToolTextReader {
  private readonly out: RegionCalls;
  /** Text not yet read: a suffix that may begin <|python_tag|>. */
  private held = "";
  private region: ObjectRegion | undefined;

  constructor(newId: () => string) {
    this.out = new RegionCalls(newId, ["parameters", "arguments"], true);
  }

  get calls(): readonly ToolCall[] {
    return this.out.calls;
  }

  push(text: string): ToolReading {
    const reading = this.out.next();
    this.scan(text, false);
    return reading;
  }

  end(): ToolReading {
    const reading = this.out.next();
    this.scan("", true);
    return reading;
  }

  private scan(text: string, final: boolean): void {
    this.held += text;
    let input = this.held.replaceAll(PYTHON_TAG, "");
    const keep = final ? 0 : partialTagOverlap(input, PYTHON_TAG);
    this.held = input.slice(input.length - keep);
    input = input.slice(0, input.length - keep);
    let plain = "";
    for (const char of input) {
      if (this.region === undefined) {
        if (char !== "{") {
          plain += char;
          continue;
        }
        this.text(plain);
        plain = "";
        this.region = { ...newRegion(), body: "", depth: 0, inString: false, escaped: false };
      }
      const region = this.region;
      region.body += char;
      if (region.inString) {
        if (region.escaped) region.escaped = false;
        else if (char === "\\") region.escaped = true;
        else if (char === '"') region.inString = false;
      } else if (char === '"') region.inString = true;
      else if (char === "{") region.depth += 1;
      else if (char === "}" && --region.depth === 0) this.close(region, true);
    }
    this.text(plain);
    if (this.region !== undefined) {
      this.out.read(this.region, this.region.body);
      if (final) this.close(this.region, false);
    }
  }

  /** An object's end: a call's arguments finished; anything else content before the first call, dropped after it. */
  private close(region: ObjectRegion, closed: boolean): void {
    this.out.read(region, region.body);
    this.out.end(region, region.body, closed, this.out.calls.length === 0 ? region.body : "");
    this.region = undefined;
  }

  /** Text outside the objects: content before the first call, nothing after. */
  private text(text: string): void {
    if (this.out.calls.length === 0) this.out.reading.content += text;
  }
}
