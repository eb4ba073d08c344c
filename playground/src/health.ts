// The Models tab: every model with its task, where it runs and its state (GET /v1/models); the
// isolate's traffic (requests, latency, tokens/s, rates between scrapes) and gauges from
// GET /metrics polled while the tab is open; and what this tab measured of its own calls. Each
// figure is a small chart.
import { call, REQUEST_DONE, type RequestFigure } from "./api";
import { TOKEN_RATE } from "./chat";
import { byId, element, showError } from "./dom";
import { parseMetrics, parseSamples } from "./metrics-text";
import { models } from "./models";
import { apiRequests, type Scrape, trafficRates } from "./traffic";

const POLL_MS = 2000;
const POINTS = 60;
const SVG = "http://www.w3.org/2000/svg";

function sparkline(values: readonly number[]): SVGSVGElement {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("viewBox", `0 0 ${POINTS} 20`);
  svg.setAttribute("preserveAspectRatio", "none");
  svg.setAttribute("aria-hidden", "true");
  const max = Math.max(...values);
  const min = Math.min(...values);
  const span = max - min;
  const line = document.createElementNS(SVG, "polyline");
  const offset = POINTS - values.length;
  line.setAttribute(
    "points",
    values
      .map((value, index) => {
        const y = span === 0 ? 10 : 19 - ((value - min) / span) * 18;
        return `${offset + index},${y}`;
      })
      .join(" "),
  );
  svg.append(line);
  return svg;
}

/** Named series of up to POINTS values, drawn as a grid of small charts. */
class Charts {
  private readonly series = new Map<string, number[]>();

  constructor(private readonly box: HTMLElement) {}

  add(name: string, value: number): void {
    const values = this.series.get(name) ?? [];
    values.push(value);
    if (values.length > POINTS) values.shift();
    this.series.set(name, values);
  }

  draw(): void {
    this.box.replaceChildren(
      ...[...this.series].map(([name, values]) => {
        const figure = element("figure", "", { class: "metric" });
        const latest = values.at(-1) ?? 0;
        const shown = Number.isInteger(latest) ? latest.toLocaleString() : latest.toFixed(1);
        figure.append(sparkline(values), element("figcaption", `${name}: ${shown}`));
        return figure;
      }),
    );
  }
}

export function setUpHealth(panel: HTMLElement): void {
  const table = byId("models-rows", HTMLTableSectionElement);
  const traffic = new Charts(byId("traffic-charts", HTMLElement));
  const gauges = new Charts(byId("metrics-charts", HTMLElement));
  const own = new Charts(byId("tab-charts", HTMLElement));
  const errors = byId("models-error", HTMLElement);
  let timer: ReturnType<typeof setInterval> | undefined;
  let requests = 0;
  let previous: Scrape | undefined;

  document.addEventListener(REQUEST_DONE, (event) => {
    if (!(event instanceof CustomEvent)) return;
    const figure: RequestFigure = event.detail;
    if (figure.path === "/metrics") return;
    own.add("requests", ++requests);
    own.add("latency to headers (ms)", Math.round(figure.milliseconds));
    if (!panel.hidden) own.draw();
  });
  document.addEventListener(TOKEN_RATE, (event) => {
    if (event instanceof CustomEvent && typeof event.detail === "number")
      own.add("chat tokens/s", event.detail);
  });

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
    const text = await response.text();
    const scrape = { at: performance.now(), samples: parseSamples(text) };
    traffic.add("edge API requests", apiRequests(scrape));
    if (previous !== undefined)
      for (const [name, value] of trafficRates(previous, scrape)) traffic.add(name, value);
    previous = scrape;
    for (const [name, value] of parseMetrics(text)) gauges.add(name, value);
    traffic.draw();
    gauges.draw();
    own.draw();
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
    previous = undefined;
    if (panel.hidden) return;
    void refreshModels().catch((error: unknown) => showError(errors, error));
    tick();
    timer = setInterval(tick, POLL_MS);
  }).observe(panel, { attributes: true, attributeFilter: ["hidden"] });
}
