// The Classify tab: texts → top-k labels as bars; an uploaded PNG/JPEG or a digit drawn on the
// canvas (mouse, pen or touch) → the digit classifier's answer, updated after each stroke.
import { call, postJson } from "./api";
import { byId, scoreBars, showError } from "./dom";
import { fillModelSelect } from "./models";

interface Classification {
  results: Array<{ labels: Array<{ label: string; score: number }> }>;
}

export function setUpClassify(): void {
  setUpTextClassify();
  setUpImageClassify();
}

function setUpTextClassify() {
  const form = byId("classify-text-form", HTMLFormElement);
  const result = byId("classify-text-result", HTMLElement);
  const errors = byId("classify-text-error", HTMLElement);
  const select = byId("classify-text-model", HTMLSelectElement);
  void fillModelSelect(select, "text-classification").catch((error: unknown) =>
    showError(errors, error),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      showError(errors, undefined);
      result.replaceChildren();
      try {
        const answer = (await postJson("/v1/classify", {
          model: select.value,
          input: byId("classify-text-input", HTMLTextAreaElement).value,
          top_k: Number(byId("classify-text-top-k", HTMLInputElement).value),
        })) as Classification;
        for (const { labels } of answer.results) result.append(scoreBars(labels));
      } catch (error) {
        showError(errors, error);
      }
    })();
  });
}

/** POSTs an encoded image as the raw body, as the API guide's first image example does. */
async function classifyImage(image: Blob, model: string): Promise<Classification> {
  const query = new URLSearchParams({ model, top_k: "3" });
  const response = await call(`/v1/classify?${query}`, {
    method: "POST",
    headers: { "content-type": image.type },
    body: image,
  });
  return (await response.json()) as Classification;
}

function setUpImageClassify() {
  const canvas = byId("digit-canvas", HTMLCanvasElement);
  const result = byId("classify-image-result", HTMLElement);
  const errors = byId("classify-image-error", HTMLElement);
  const select = byId("classify-image-model", HTMLSelectElement);
  const context = canvas.getContext("2d");
  if (context === null) throw new Error("no 2D canvas");
  void fillModelSelect(select, "image-classification").catch((error: unknown) =>
    showError(errors, error),
  );

  let drawing = false;
  let sequence = 0;
  const clear = () => {
    context.fillStyle = "#fff";
    context.fillRect(0, 0, canvas.width, canvas.height);
    result.replaceChildren();
    delete result.dataset.best;
    // An answer still on its way was for the drawing just cleared.
    sequence++;
  };
  clear();
  const at = (event: PointerEvent) => {
    const box = canvas.getBoundingClientRect();
    return [
      ((event.clientX - box.left) * canvas.width) / box.width,
      ((event.clientY - box.top) * canvas.height) / box.height,
    ] as const;
  };
  canvas.addEventListener("pointerdown", (event) => {
    drawing = true;
    canvas.setPointerCapture(event.pointerId);
    const [x, y] = at(event);
    context.beginPath();
    context.moveTo(x, y);
  });
  canvas.addEventListener("pointermove", (event) => {
    if (!drawing) return;
    const [x, y] = at(event);
    context.lineWidth = canvas.width / 14;
    context.lineCap = "round";
    context.lineJoin = "round";
    context.strokeStyle = "#000";
    context.lineTo(x, y);
    context.stroke();
  });
  canvas.addEventListener("pointerup", () => {
    drawing = false;
    canvas.toBlob((blob) => {
      if (blob !== null) void show(blob);
    }, "image/png");
  });
  byId("digit-clear", HTMLButtonElement).addEventListener("click", clear);
  byId("classify-image-file", HTMLInputElement).addEventListener("change", (event) => {
    const file = event.target instanceof HTMLInputElement ? event.target.files?.[0] : undefined;
    if (file !== undefined) void show(file);
  });

  async function show(image: Blob) {
    // Strokes come faster than answers: only the latest request's answer is shown.
    const mine = ++sequence;
    showError(errors, undefined);
    try {
      const answer = await classifyImage(image, select.value);
      if (mine !== sequence) return;
      result.replaceChildren(...answer.results.map(({ labels }) => scoreBars(labels)));
      const best = answer.results[0]?.labels[0];
      result.dataset.best = best?.label ?? "";
    } catch (error) {
      if (mine === sequence) showError(errors, error);
    }
  }
}
