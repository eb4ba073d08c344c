// The playground in a real browser: Debian's headless Chromium (driven by puppeteer-core, nothing
// downloaded) against `wrangler dev` and the reference origin, both real processes on loopback.
// It saves a screenshot of each tab to .cache/playground/ (docs/playground.png is one of them).
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrigin } from "../../scripts/lib/origin.mjs";
import { startWranglerDev } from "../../scripts/lib/wrangler-dev.mjs";
import { metricValue } from "../support/metric-value";
import { TEST_SECRETS } from "../support/secrets";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = join(import.meta.dirname, "../../.cache/playground");
const KEY = TEST_SECRETS.API_KEYS.split(",")[0] ?? "";

if (!existsSync(CHROMIUM))
  console.warn(`playground test skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);

/** One of the origin's Prometheus samples (0 when absent). */
async function originMetric(origin: string, name: string, labels = ""): Promise<number> {
  return metricValue(await (await fetch(`${origin}/metrics`)).text(), name, labels);
}

async function setValue(page: Page, selector: string, value: string) {
  await page.$eval(
    selector,
    (input, text) => {
      if (!(input instanceof HTMLInputElement || input instanceof HTMLSelectElement)) return;
      input.value = text;
      input.dispatchEvent(new Event("change"));
    },
    value,
  );
}

describe.skipIf(!existsSync(CHROMIUM))("the playground in Chromium", () => {
  let state: string;
  let base: string;
  let origin: string;
  let browser: Browser;
  let page: Page;
  const stops: Array<() => unknown> = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    state = mkdtempSync(join(tmpdir(), "playground-"));
    const started = await startOrigin();
    stops.push(started.stop);
    origin = started.url;
    const edge = await startWranglerDev({
      persistTo: state,
      vars: { ...TEST_SECRETS, ORIGIN_URL: origin },
    });
    stops.push(edge.stop);
    base = edge.url;
    browser = await puppeteer.launch({
      executablePath: CHROMIUM,
      headless: true,
      // Root in a container has no user namespaces for Chromium's sandbox.
      args: ["--no-sandbox", "--disable-dev-shm-usage"],
    });
    stops.push(() => browser.close());
    page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 860 });
  });

  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    if (state) rmSync(state, { recursive: true, force: true });
  });

  async function openTab(name: string) {
    await page.click(`#tab-${name}`);
    await page.waitForSelector(`#panel-${name}:not([hidden])`);
  }

  it("serves the page with a self-only CSP, and asks for a key the service requires", async () => {
    const response = await page.goto(`${base}/`, { waitUntil: "networkidle0" });
    expect(response?.status()).toBe(200);
    const csp = response?.headers()["content-security-policy"] ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|\*|unsafe/);
    // API answers carry no asset headers: they come from the Worker, not the assets.
    const api = await fetch(`${base}/v1/models`);
    expect(api.status).toBe(401);
    expect(api.headers.get("content-security-policy")).toBeNull();

    await page.waitForFunction(() =>
      /needs an API key/.test(document.querySelector("#api-key-note")?.textContent ?? ""),
    );
    await page.type("#api-key", KEY);
    await page.$eval("#api-key", (input) => input.dispatchEvent(new Event("change")));
    expect(await page.evaluate(() => sessionStorage.length)).toBe(1);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    await page.reload({ waitUntil: "networkidle0" });
    await page.waitForSelector("#chat-model option[value=tiny-llm]");
  });

  it("streams a chat into the page, and Stop ends it and the origin's work", async () => {
    await openTab("chat");
    await setValue(page, "#chat-max-tokens", "480");
    const aborted = () =>
      originMetric(origin, "vllm:request_success_total", 'finished_reason="abort"');
    const abortsBefore = await aborted();
    // In the page: note each length the answer grows to while the state says "streaming"; after
    // the third growth, press Stop at once (the tiny model streams hundreds of tokens a second).
    await page.evaluate(() => {
      const output = document.querySelector("#chat-output");
      const state = document.querySelector("#chat-state");
      const seen: number[] = [];
      Reflect.set(window, "grewWhileStreaming", seen);
      if (output === null || state === null) return;
      new MutationObserver((_, observer) => {
        if (state.textContent !== "streaming") return;
        seen.push(output.textContent?.length ?? 0);
        if (seen.length === 3) {
          observer.disconnect();
          document.querySelector<HTMLButtonElement>("#chat-stop-button")?.click();
        }
      }).observe(output, { childList: true, characterData: true, subtree: true });
    });
    await page.click("#chat-send");
    await page.waitForFunction(
      () => document.querySelector("#chat-state")?.textContent !== "streaming",
    );
    const grew = (await page.evaluate(() => Reflect.get(window, "grewWhileStreaming"))) as number[];
    expect(grew).toHaveLength(3);
    expect(grew[0]).toBeGreaterThan(0);
    expect(grew[2]).toBeGreaterThan(grew[0] ?? 0);
    expect(await page.$eval("#chat-state", (node) => node.textContent)).toBe("stopped");
    expect(await page.$eval("#chat-stats", (node) => node.textContent)).toMatch(
      /first token \d+ ms/,
    );
    // The origin ends the request (an abort, not a full answer) and its running gauge is 0.
    await expect
      .poll(() => originMetric(origin, "vllm:num_requests_running"), { timeout: 10_000 })
      .toBe(0);
    expect(await aborted()).toBe(abortsBefore + 1);
    await page.screenshot({ path: join(SCREENSHOTS, "chat.png") });

    // Run to the end: tokens/s and usage are shown.
    await setValue(page, "#chat-max-tokens", "24");
    await page.click("#chat-send");
    await page.waitForFunction(() =>
      /^done/.test(document.querySelector("#chat-state")?.textContent ?? ""),
    );
    expect(await page.$eval("#chat-stats", (node) => node.textContent)).toMatch(
      /tokens\/s .*usage: \d+ prompt \+ 24 completion/,
    );
  });
});
