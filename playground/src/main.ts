// The playground's entry: the tabs (an ARIA tablist, arrow keys move between tabs), the API key
// box, and each tab's panel set up once.
import { KEY_REQUIRED } from "./api";
import { setUpChat } from "./chat";
import { setUpClassify } from "./classify";
import { byId } from "./dom";
import { setUpFraud } from "./fraud";
import { setUpHealth } from "./health";
import { setUpImages } from "./images";
import { readKey, writeKey } from "./key";
import { setUpTokenizer } from "./tokenizer";

function setUpTabs(): void {
  const tabs = [...document.querySelectorAll<HTMLButtonElement>("[role=tab]")];
  const select = (chosen: HTMLButtonElement) => {
    for (const tab of tabs) {
      const selected = tab === chosen;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      const panel = document.getElementById(tab.getAttribute("aria-controls") ?? "");
      if (panel !== null) panel.hidden = !selected;
    }
    history.replaceState(null, "", `#${chosen.id.replace(/^tab-/, "")}`);
  };
  tabs.forEach((tab, index) => {
    tab.addEventListener("click", () => select(tab));
    tab.addEventListener("keydown", (event) => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
      if (step === undefined) return;
      const next = tabs[(index + step + tabs.length) % tabs.length];
      if (next === undefined) return;
      select(next);
      next.focus();
    });
  });
  const initial = tabs.find((tab) => `#${tab.id.replace(/^tab-/, "")}` === location.hash);
  const first = initial ?? tabs[0];
  if (first !== undefined) select(first);
}

function setUpKey(): void {
  const input = byId("api-key", HTMLInputElement);
  const note = byId("api-key-note", HTMLElement);
  input.value = readKey();
  input.addEventListener("change", () => {
    writeKey(input.value.trim());
    note.textContent = input.value.trim() === "" ? "" : "Kept in this tab only.";
  });
  document.addEventListener(KEY_REQUIRED, () => {
    note.textContent = "This service needs an API key: paste one, then try again.";
    input.focus();
  });
}

setUpKey();
setUpChat();
setUpImages();
setUpClassify();
setUpFraud();
setUpTokenizer();
setUpHealth(byId("panel-models", HTMLElement));
setUpTabs();
