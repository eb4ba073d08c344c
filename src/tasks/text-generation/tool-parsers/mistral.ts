// tool_choice "auto" for Mistral models, which call after a [TOOL_CALLS] token, read as vLLM's
// mistral parser reads them.
import { newObjectRegion, objectCloses, type ObjectRegion } from "./call-region";
import { partialTagOverlap, RegionReader } from "./region-reader";

const BOT = "[TOOL_CALLS]";
const ARGS = "[ARGS]";

/**
 * Two formats, by the tokenizer a model was trained with:
 *   - v11 and later (Mistral Small 3.x, Magistral, Devstral, …): `[TOOL_CALLS]name{args}` per
 *     call, `[ARGS]` between the two where a Hugging Face tokenizer writes it;
 *   - before v11 (Mistral 7B v0.3, Mixtral): `[TOOL_CALLS] [{"name": …, "arguments": {…}}, …]`.
 * vLLM tells them apart by the tokenizer's vocabulary; here the text after the first [TOOL_CALLS]
 * does: a `[` starts the list. The text before the first [TOOL_CALLS] is content; a call's name is
 * sent once whole (at its arguments' `{`), then its arguments as written, to their balanced end.
 * Where this reader answers otherwise than vLLM, so that the streamed deltas joined equal the whole
 * response:
 *   - the arguments are the JSON written (vLLM's whole-response path re-serializes the list's,
 *     and a v11 call's run on to the next [TOOL_CALLS], trailing text included);
 *   - text after the calls is dropped (vLLM's pre-v11 stream sends it as content, its
 *     whole-response path drops it); a v11 call with no arguments is dropped, as vLLM drops it.
 */
export class MistralToolReader extends RegionReader {
  /** Unknown until the first non-blank character after the first [TOOL_CALLS]. */
  private format: "named" | "list" | undefined;
  private calling = false;
  private call: ObjectRegion | undefined;

  constructor(newId: () => string) {
    super(newId, ["arguments"]);
  }

  protected scan(final: boolean): void {
    this.read(final);
    if (final && this.call !== undefined) this.finish(this.call, false);
  }

  private read(final: boolean): void {
    if (!this.calling) {
      const at = this.held.indexOf(BOT);
      if (at === -1) {
        const keep = final ? 0 : partialTagOverlap(this.held, BOT);
        this.out.reading.content += this.held.slice(0, this.held.length - keep);
        this.held = this.held.slice(this.held.length - keep);
        return;
      }
      this.out.reading.content += this.held.slice(0, at);
      this.held = this.held.slice(at + BOT.length);
      this.calling = true;
    }
    if (this.format === undefined) {
      const first = this.held.trimStart()[0];
      if (first === undefined) return;
      this.format = first === "[" ? "list" : "named";
    }
    if (this.format === "named") {
      this.named(final);
      return;
    }
    this.list(this.held);
    this.held = "";
  }

  /** v11: each [TOOL_CALLS] starts a call, its name up to the arguments' `{`. */
  private named(final: boolean): void {
    for (;;) {
      const at = this.held.indexOf(BOT);
      const keep = at !== -1 || final ? 0 : partialTagOverlap(this.held, BOT);
      const piece = this.held.slice(0, at === -1 ? this.held.length - keep : at);
      this.held =
        at === -1 ? this.held.slice(this.held.length - keep) : this.held.slice(at + BOT.length);
      const call = (this.call ??= newObjectRegion());
      call.body += piece;
      const body = namedBody(call.body);
      if (body !== undefined) this.out.read(call, body);
      if (at === -1) return;
      this.finish(call, true);
    }
  }

  /** Before v11: the list's objects, each a call once its name is written; nothing else counts. */
  private list(text: string): void {
    for (const char of text) {
      if (this.call === undefined) {
        if (char !== "{") continue;
        this.call = newObjectRegion();
      }
      if (objectCloses(this.call, char)) this.finish(this.call, true);
    }
    if (this.call !== undefined) this.out.read(this.call, this.call.body);
  }

  /** A call's end (`closed` false: the generation ended inside it). */
  private finish(call: ObjectRegion, closed: boolean): void {
    const body = this.format === "named" ? namedBody(call.body) : call.body;
    if (body !== undefined) {
      this.out.read(call, body);
      this.out.end(call, body, closed, "");
    }
    this.call = undefined;
  }
}

/**
 * A v11 call's text as the object the shared reader reads, `{"name": …, "arguments": <as written>`
 * (undefined: no arguments yet).
 */
function namedBody(text: string): string | undefined {
  const brace = text.indexOf("{");
  if (brace === -1) return undefined;
  return (
    `{"name": ${JSON.stringify(text.slice(0, brace).replaceAll(ARGS, "").trim())}, ` +
    `"arguments": ${text.slice(brace)}`
  );
}
