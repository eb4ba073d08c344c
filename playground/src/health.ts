// The Models tab: every model with its task, where it runs and its state (GET /v1/models), and
// this isolate's gauges from GET /metrics polled while the tab is open, each as a small chart.
import { call } from "./api";
import { byId, element, showError } from "./dom";
import { models } from "./models";

const POLL_MS = 2000;
const POINTS = 60;
const SVG = "http://www.w3.org/2000/svg";

/** `name{labels} value` lines of Prometheus text, summed per metric name. */
export function parseMetrics(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match?.[1] === undefined || match[2] === undefined) continue;
    const value = Number(match[2]);
    if (Number.isFinite(value)) sums.set(match[1], (sums.get(match[1]) ?? 0) + value);
  }
  return sums;
}

function sparkline(values: readonly number[]): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${POINTS} 20`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("aria-hidden", "true");
  const max = Math.max(...values);
  const min = Math.min(...values);
  const span = max - min || 1;
  const line = document.createElementNS(SVG, "polyline");
  const offset = POINTS - values.length;
  line.setAttribute(
    "points",
    values.map((value, index) => `${offset + index},${19 - ((value - min) / span) * 18}`).join(" "),
  );
  svg.append(line);
  return svg;
}

export function setUpHealth(panel: HTMLElement): void {
  const table = byId("models-rows", HTMLTableSectionElement);
  const charts = byId("metrics-charts", HTMLElement);
  const errors = byId("models-error", HTMLElement);
  const series = new Map<string, number[]>();
  let timer: ReturnType<typeof setInterval> | undefined;

  async function refreshModels() {
    const list = await models(true);
    table.replaceChildren(
      ...list.map((model) => {
        const row = element("tr");
        const where = model.runtime === "origin" ? "origin (GPU)" : "edge (WASM)";
        row.append(element("td", model.id), element("td", model.task), element("td", where));
        row.append(element("td", model.state), element("td", model.version ?? ""));
        return row;
      }),
    );
  }

  async function poll() {
    const response = await call("/metrics");
    for (const [name, value] of parseMetrics(await response.text())) {
      const values = series.get(name) ?? [];
      values.push(value);
      if (values.length > POINTS) values.shift();
      series.set(name, values);
    }
    charts.replaceChildren(
      ...[...series].map(([name, values]) => {
        const figure = element("figure", "", { class: "metric" });
        const latest = values.at(-1) ?? 0;
        figure.append(sparkline(values));
        figure.append(element("figcaption", `${name} ${latest.toLocaleString()}`));
        return figure;
      }),
    );
  }

  const tick = () =>
    void poll().then(
      () => showError(errors, undefined),
      (error: unknown) => showError(errors, error),
    );
  // Polls only while the tab is shown.
  new MutationObserver(() => {
    clearInterval(timer);
    timer = undefined;
    if (panel.hidden) return;
    void refreshModels().catch((error: unknown) => showError(errors, error));
    tick();
    timer = setInterval(tick, POLL_MS);
  }).observe(panel, { attributes: true, attributeFilter: ["hidden"] });
}
