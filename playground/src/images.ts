// The Images tab: a streamed OpenAI image generation; each preview the edge draws from the
// predicted clean latent appears as it arrives, then the final image. Pictures are decoded into
// canvases (no data: or blob: URLs, so the Content-Security-Policy stays 'self' only).
import { call } from "./api";
import { byId, element, optionalNumber, showError } from "./dom";
import { fillModelSelect } from "./models";
import { readEvents } from "./sse";

interface ImageEvent {
  type: string;
  b64_json?: string;
  partial_image_index?: number;
  error?: { message: string };
}

/** A base64 PNG drawn into a new canvas. */
export async function pngCanvas(base64: string, label: string): Promise<HTMLCanvasElement> {
  const bytes = Uint8Array.from(atob(base64), (char) => char.charCodeAt(0));
  const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
  const canvas = element("canvas", "", { role: "img", "aria-label": label });
  canvas.width = bitmap.width;
  canvas.height = bitmap.height;
  canvas.getContext("2d")?.drawImage(bitmap, 0, 0);
  return canvas;
}

export function setUpImages(): void {
  const form = byId("images-form", HTMLFormElement);
  const send = byId("images-send", HTMLButtonElement);
  const previews = byId("images-previews", HTMLElement);
  const final = byId("images-final", HTMLElement);
  const errors = byId("images-error", HTMLElement);
  const state = byId("images-state", HTMLElement);
  const number = (id: string) => optionalNumber(byId(id, HTMLInputElement));

  void fillModelSelect(byId("images-model", HTMLSelectElement), "text-to-image").catch(
    (error: unknown) => showError(errors, error),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void run();
  });

  async function run() {
    showError(errors, undefined);
    previews.replaceChildren();
    final.replaceChildren();
    send.disabled = true;
    state.textContent = "generating";
    const started = performance.now();
    // Canvases are appended in arrival order even though decoding them is asynchronous.
    let drawn = Promise.resolve();
    try {
      const response = await call("/v1/images/generations", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: byId("images-model", HTMLSelectElement).value,
          prompt: byId("images-prompt", HTMLInputElement).value,
          size: byId("images-size", HTMLSelectElement).value,
          scheduler: byId("images-scheduler", HTMLSelectElement).value,
          steps: number("images-steps"),
          guidance_scale: number("images-guidance"),
          seed: number("images-seed"),
          stream: true,
          partial_images: 3,
        }),
      });
      await readEvents(response, ({ data }) => {
        if (data === "[DONE]") return;
        const event = JSON.parse(data) as ImageEvent;
        if (event.error !== undefined) throw new Error(event.error.message);
        const base64 = event.b64_json;
        if (base64 === undefined) return;
        const elapsed = Math.round(performance.now() - started);
        if (event.type === "image_generation.partial_image") {
          const index = event.partial_image_index ?? 0;
          drawn = drawn.then(async () => {
            const figure = element("figure", "", { class: "preview" });
            figure.append(await pngCanvas(base64, `preview ${index + 1}`));
            figure.append(element("figcaption", `preview ${index + 1} · ${elapsed} ms`));
            previews.append(figure);
          });
        } else if (event.type === "image_generation.completed") {
          drawn = drawn.then(async () => {
            const figure = element("figure", "", { class: "final" });
            figure.append(await pngCanvas(base64, "final image"));
            figure.append(element("figcaption", `final · ${elapsed} ms`));
            final.append(figure);
          });
        }
      });
      await drawn;
      state.textContent = "done";
    } catch (error) {
      state.textContent = "failed";
      showError(errors, error);
    } finally {
      send.disabled = false;
    }
  }
}
