// The Tokenizer tab: a text's tokens for a model's tokenizer (vLLM's /tokenize), each token's
// text from /detokenize shown as a box, its id on hover and focus.
import { postJson } from "./api";
import { byId, element, showError } from "./dom";
import { models } from "./models";

/** Tokens drawn at most (each one costs a /detokenize call). */
const MAX_SHOWN = 200;

export function setUpTokenizer(): void {
  const select = byId("tokenizer-model", HTMLSelectElement);
  const output = byId("tokenizer-output", HTMLElement);
  const count = byId("tokenizer-count", HTMLElement);
  const errors = byId("tokenizer-error", HTMLElement);
  void models().then(
    (list) => {
      const tokenized = list.filter((model) => /generation|text-classification/.test(model.task));
      select.replaceChildren(...tokenized.map((model) => new Option(model.id, model.id)));
    },
    (error: unknown) => showError(errors, error),
  );

  byId("tokenizer-form", HTMLFormElement).addEventListener("submit", (event) => {
    event.preventDefault();
    void (async () => {
      showError(errors, undefined);
      output.replaceChildren();
      try {
        const model = select.value;
        const prompt = byId("tokenizer-input", HTMLTextAreaElement).value;
        const answer = (await postJson("/tokenize", { model, prompt })) as { tokens: number[] };
        count.textContent = `${answer.tokens.length} tokens`;
        const shown = answer.tokens.slice(0, MAX_SHOWN);
        const texts = await Promise.all(
          shown.map(async (id) => {
            const piece = (await postJson("/detokenize", { model, tokens: [id] })) as {
              prompt: string;
            };
            return piece.prompt;
          }),
        );
        shown.forEach((id, index) => {
          const text = texts[index] ?? "";
          const token = element("span", text.replaceAll("\n", "↵"), {
            class: `token tone-${index % 4}`,
            title: `id ${id}`,
            tabindex: "0",
            "aria-label": `token ${index + 1}: ${JSON.stringify(text)}, id ${id}`,
          });
          output.append(token);
        });
      } catch (error) {
        showError(errors, error);
      }
    })();
  });
}
