// Small DOM helpers shared by the panels: typed lookups and the error box that shows an API
// problem's title, detail and field.
import { ApiError } from "./api";

/** The element with this id, checked to be of the expected class. */
export function byId<T extends HTMLElement>(id: string, type: new () => T): T {
  const element = document.getElementById(id);
  if (!(element instanceof type)) throw new Error(`#${id} is missing or not a ${type.name}`);
  return element;
}

/** Creates an element with text and attributes. */
export function element<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  text = "",
  attributes: Record<string, string> = {},
): HTMLElementTagNameMap[K] {
  const created = document.createElement(tag);
  created.textContent = text;
  for (const [name, value] of Object.entries(attributes)) created.setAttribute(name, value);
  return created;
}

/** Shows an error (or clears the box with `undefined`); an ApiError names its field. */
export function showError(box: HTMLElement, error: unknown): void {
  box.replaceChildren();
  box.hidden = error === undefined;
  if (error === undefined) return;
  if (error instanceof DOMException && error.name === "AbortError") {
    box.hidden = true;
    return;
  }
  if (error instanceof ApiError) {
    box.append(element("strong", `${error.status} ${error.title}`));
    box.append(element("p", error.detail));
    if (error.field !== undefined)
      box.append(element("p", `Field: ${error.field}`, { class: "field" }));
    return;
  }
  box.append(element("strong", "Request failed"), element("p", String(error)));
}

/** A number input's value, or undefined when it is empty. */
export function optionalNumber(input: HTMLInputElement): number | undefined {
  return input.value.trim() === "" ? undefined : Number(input.value);
}

/** A horizontal bar list: label, bar of width score, score. */
export function scoreBars(scores: ReadonlyArray<{ label: string; score: number }>): HTMLElement {
  const list = element("ol", "", { class: "bars" });
  for (const { label, score } of scores) {
    const item = element("li");
    const bar = element("span", "", { class: "bar" });
    bar.style.setProperty("--score", String(score));
    item.append(element("span", label, { class: "label" }), bar);
    item.append(element("span", score.toFixed(3), { class: "score" }));
    list.append(item);
  }
  return list;
}
