// tool_choice "auto" for Llama 3.1–3.3 and 4 models, which call by writing JSON objects, read as
// vLLM's llama3_json / llama4_json parser reads them.
import { newObjectRegion, objectCloses, type ObjectRegion } from "./call-region";
import { partialTagOverlap, RegionReader } from "./region-reader";

const PYTHON_TAG = "<|python_tag|>";

/**
 * The format: `{"name": "…", "parameters": {…}}` ("arguments" is taken too), perhaps after
 * `<|python_tag|>`, several separated by `;` or white space. An object is a call once both its name
 * and its parameters' key are written; its name is sent then, its arguments as written. Text before
 * the first call is content (vLLM's whole-response path drops it, its stream only calls when the
 * output starts with the JSON); after a call, text and objects that are not calls are dropped, as
 * vLLM drops them. An object that is not a call, before any call, is content as written, sent when
 * it closes.
 */
export class Llama3JsonToolReader extends RegionReader {
  private region: ObjectRegion | undefined;

  constructor(newId: () => string) {
    super(newId, ["parameters", "arguments"], true);
  }

  protected scan(final: boolean): void {
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
        this.region = newObjectRegion();
      }
      if (objectCloses(this.region, char)) this.close(this.region, true);
    }
    this.text(plain);
    if (this.region !== undefined) {
      this.out.read(this.region, this.region.body);
      if (final) this.close(this.region, false);
    }
  }

  /**
   * An object's end: a call's arguments finished; anything else content before the first call,
   * dropped after it.
   */
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
