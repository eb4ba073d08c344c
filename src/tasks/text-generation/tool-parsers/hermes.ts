// tool_choice "auto" for models that write their calls in the Hermes format (Qwen 2.5 and 3, Hermes
// 2 Pro and 3, …), read as vLLM's hermes parser reads them.
import { newRegion, type Region } from "./call-region";
import { partialTagOverlap, RegionReader } from "./region-reader";

const OPEN = "<tool_call>";
const CLOSE = "</tool_call>";

/** An open <tool_call> region: its text so far, and how far its call has been read. */
interface TagRegion extends Region {
  body: string;
}

/**
 * The format: `<tool_call>{"name": "…", "arguments": {…}}</tool_call>`.
 *   - the text before the first <tool_call> is the message's content; a suffix that may be the
 *     start of the tag is held back until it is known not to be;
 *   - a call's name is sent as soon as it is written, then its arguments as they are written:
 *     the value after "arguments", read to its balanced end (braces in strings ignored);
 *   - text between and after the calls is dropped.
 * Two differences from vLLM, both so that the streamed deltas joined equal the whole response:
 *   - the arguments are the JSON text the model wrote (vLLM's whole-response path re-serializes
 *     them with json.dumps, its stream sends them as written);
 *   - a <tool_call> region with no name in it is kept, as written, in the content (vLLM's
 *     stream drops it; its whole-response path turns the whole output into content).
 */
export class HermesToolReader extends RegionReader {
  private region: TagRegion | undefined;
  /** Whether a <tool_call> was seen: text outside the calls then counts for nothing. */
  private calling = false;

  constructor(newId: () => string) {
    super(newId, ["arguments"]);
  }

  protected scan(final: boolean): void {
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
        this.region = { ...newRegion(), body: "" };
      }
      const region = this.region;
      const from = Math.max(0, region.body.length - (CLOSE.length - 1));
      region.body += this.held;
      this.held = "";
      const close = region.body.indexOf(CLOSE, from);
      if (close === -1) {
        // Read no further than what is surely the call's: a partial </tool_call> may follow.
        const stable = final
          ? region.body.length
          : region.body.length - partialTagOverlap(region.body, CLOSE);
        this.out.read(region, region.body.slice(0, stable));
        if (final) this.out.end(region, region.body, false, OPEN + region.body);
        return;
      }
      const body = region.body.slice(0, close);
      this.held = region.body.slice(close + CLOSE.length);
      this.out.read(region, body);
      this.out.end(region, body, true, OPEN + body + CLOSE);
      this.region = undefined;
    }
  }

  /** Text outside the calls: the content before the first one, nothing after. */
  private text(text: string): void {
    if (!this.calling) this.out.reading.content += text;
  }
}
