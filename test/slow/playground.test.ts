// The playground in a real browser: Debian's headless Chromium (driven by puppeteer-core, nothing
// downloaded) against `wrangler dev` and the reference origin, both real processes on loopback.
// It saves a screenshot of each tab to .cache/playground/ (docs/playground.png is one of them).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer, { type Browser, type Page } from "puppeteer-core";
import Stripe from "stripe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOrigin } from "../../scripts/lib/origin.mjs";
import { startWranglerDev } from "../../scripts/lib/wrangler-dev.mjs";
import { metricValue } from "../support/metric-value";
import { TEST_SECRETS } from "../support/secrets";

const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const SCREENSHOTS = join(import.meta.dirname, "../../.cache/playground");
const KEY = TEST_SECRETS.API_KEYS.split(",")[0] ?? "";
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

if (!existsSync(CHROMIUM))
  console.warn(`playground test skipped: no Chromium at ${CHROMIUM} (set CHROMIUM_PATH)`);

/** One of the origin's Prometheus samples (0 when absent). */
async function originMetric(origin: string, name: string, labels = ""): Promise<number> {
  return metricValue(await (await fetch(`${origin}/metrics`)).text(), name, labels);
}

/** The origin's server process: tsx runs origin/server.ts in a child of the process it starts. */
function serverPid(pid: number): number {
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
  return Number(children.split(/\s+/)[0] || pid);
}

/**
 * Lets a process run `runMs` in every `periodMs` (SIGSTOP, SIGCONT), as a slower GPU would
 * stream; the returned function lets it run freely again.
 */
function throttle(pid: number, runMs: number, periodMs: number): () => void {
  let on = true;
  const timer = setInterval(() => {
    process.kill(pid, "SIGCONT");
    setTimeout(() => on && process.kill(pid, "SIGSTOP"), runMs);
  }, periodMs);
  return () => {
    on = false;
    clearInterval(timer);
    process.kill(pid, "SIGCONT");
  };
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
  let originPid: number;
  let browser: Browser;
  let page: Page;
  const stops: Array<() => unknown> = [];
  const problems: string[] = [];

  beforeAll(async () => {
    mkdirSync(SCREENSHOTS, { recursive: true });
    state = mkdtempSync(join(tmpdir(), "playground-"));
    const migrations = spawnSync(
      "npx",
      ["wrangler", "d1", "migrations", "apply", "DB", "--local", "--persist-to", state],
      { encoding: "utf8", env: { ...process.env, CI: "true" } },
    );
    if (migrations.status !== 0) throw new Error(`migrations: ${migrations.stderr}`);
    const started = await startOrigin();
    stops.push(started.stop);
    origin = started.url;
    originPid = serverPid(started.process.pid ?? 0);
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
    page.on("pageerror", (error) => problems.push(`page error: ${String(error)}`));
    page.on("console", (message) => {
      if (/Content.Security.Policy/i.test(message.text())) problems.push(message.text());
    });
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
    // API answers carry none of the playground files' headers (src/routes/playground).
    const api = await fetch(`${base}/v1/models`);
    expect(api.status).toBe(401);
    expect(api.headers.get("content-security-policy")).toBeNull();
    for (const file of ["/app.js", "/styles.css"]) {
      const asset = await fetch(`${base}${file}`);
      expect(asset.status, file).toBe(200);
      expect(asset.headers.get("content-security-policy"), file).toBe(csp);
    }
    for (const path of ["/_headers", "/no-such-page"]) {
      const missing = await fetch(`${base}${path}`);
      expect(missing.status, path).toBe(404);
      expect(missing.headers.get("content-type"), path).toContain("application/problem+json");
    }

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
    const generated = () => originMetric(origin, "vllm:generation_tokens_total");
    const abortsBefore = await aborted();
    const generatedBefore = await generated();
    // In the page: note each length the answer grows to while the state says "streaming"; after
    // the third growth, press Stop at once.
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
    // The tiny model decodes 480 tokens in about half a second on this CPU: sooner than a busy
    // machine's browser can be counted on to press Stop. Throttled to a tenth of the time, the
    // origin streams for seconds, as a real model would.
    const release = throttle(originPid, 10, 100);
    try {
      await page.click("#chat-send");
      await page.waitForFunction(
        () => document.querySelector("#chat-state")?.textContent !== "streaming",
      );
      const grew = (await page.evaluate(() =>
        Reflect.get(window, "grewWhileStreaming"),
      )) as number[];
      expect(grew).toHaveLength(3);
      expect(grew[0]).toBeGreaterThan(0);
      expect(grew[2]).toBeGreaterThan(grew[0] ?? 0);
      expect(await page.$eval("#chat-state", (node) => node.textContent)).toBe("stopped");
      expect(await page.$eval("#chat-stats", (node) => node.textContent)).toMatch(
        /first token \d+ ms/,
      );
      // The origin ends the request as an abort, short of its 480 tokens, and runs nothing.
      await expect.poll(aborted, { timeout: 20_000 }).toBe(abortsBefore + 1);
      await expect
        .poll(() => originMetric(origin, "vllm:num_requests_running"), { timeout: 20_000 })
        .toBe(0);
      expect((await generated()) - generatedBefore).toBeLessThan(480);
    } finally {
      release();
    }
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

  it("renders tool calls and structured output as such", async () => {
    await page.click("#panel-chat summary");
    // Greedy, so that the tiny model's strings end within the token budget.
    await setValue(page, "#chat-max-tokens", "200");
    await setValue(page, "#chat-temperature", "0");
    const tools = [
      {
        type: "function",
        function: {
          name: "get_weather",
          parameters: {
            type: "object",
            properties: { city: { type: "string" } },
            required: ["city"],
          },
        },
      },
    ];
    await page.$eval(
      "#chat-tools",
      (area, text) => {
        if (area instanceof HTMLTextAreaElement) area.value = text;
      },
      JSON.stringify(tools),
    );
    await setValue(page, "#chat-tool-choice", "required");
    await page.click("#chat-parallel");
    await page.click("#chat-send");
    await page.waitForFunction(() =>
      /^done/.test(document.querySelector("#chat-state")?.textContent ?? ""),
    );
    expect(
      await page.$$eval("#chat-tool-calls strong", (nodes) =>
        nodes.map((node) => node.textContent),
      ),
    ).toEqual(["tool call: get_weather"]);
    const args = await page.$eval("#chat-tool-calls pre", (node) => node.textContent ?? "");
    await page.screenshot({ path: join(SCREENSHOTS, "tool-call.png") });
    expect(Object.keys(JSON.parse(args))).toEqual(["city"]);

    await page.$eval("#chat-tools", (area) => {
      if (area instanceof HTMLTextAreaElement) area.value = "";
    });
    await setValue(page, "#chat-format", "json_schema");
    await page.click("#chat-send");
    await page.waitForFunction(() =>
      /^done/.test(document.querySelector("#chat-state")?.textContent ?? ""),
    );
    const shown = await page.$eval("#chat-output", (node) => [node.className, node.textContent]);
    expect(shown[0], String(shown[1])).toContain("json");
    const answer = JSON.parse(await page.$eval("#chat-output", (node) => node.textContent ?? ""));
    expect(Object.keys(answer).sort()).toEqual(["happy", "name"]);
    expect(typeof answer.happy).toBe("boolean");
    await setValue(page, "#chat-format", "text");
    await setValue(page, "#chat-temperature", "0.8");
  });

  it("shows the image previews the edge streams before the final image", async () => {
    await openTab("images");
    // In the page: the time each figure appears, in order.
    await page.evaluate(() => {
      const shown: Array<{ kind: string; at: number }> = [];
      Reflect.set(window, "imageFigures", shown);
      for (const id of ["images-previews", "images-final"]) {
        const box = document.getElementById(id);
        if (box === null) continue;
        new MutationObserver((records) => {
          for (const record of records)
            for (const node of record.addedNodes)
              if (node instanceof HTMLElement) shown.push({ kind: node.className, at: Date.now() });
        }).observe(box, { childList: true });
      }
    });
    await page.click("#images-send");
    await page.waitForSelector("#images-final figure canvas");
    const shown = (await page.evaluate(() => Reflect.get(window, "imageFigures"))) as Array<{
      kind: string;
    }>;
    const kinds = shown.map(({ kind }) => kind);
    expect(kinds.at(-1)).toBe("final");
    expect(kinds.filter((kind) => kind === "preview").length).toBeGreaterThanOrEqual(1);
    expect(kinds.indexOf("preview")).toBeLessThan(kinds.indexOf("final"));
    // The final picture has ink on it: not a blank canvas.
    const inked = await page.$eval("#images-final canvas", (canvas) => {
      if (!(canvas instanceof HTMLCanvasElement)) return 0;
      const pixels = canvas.getContext("2d")?.getImageData(0, 0, canvas.width, canvas.height);
      const values = pixels?.data ?? new Uint8ClampedArray();
      let min = 255;
      let max = 0;
      for (let i = 0; i < values.length; i += 4) {
        min = Math.min(min, values[i] ?? 0);
        max = Math.max(max, values[i] ?? 0);
      }
      return max - min;
    });
    expect(inked).toBeGreaterThan(100);
    // The README's picture (docs/playground.png): the page's top, where the images are.
    await page.screenshot({
      path: join(SCREENSHOTS, "images.png"),
      clip: { x: 0, y: 0, width: 1200, height: 520 },
    });

    // The same seed gives the same picture; another seed another one.
    const finalPixels = () =>
      page.$eval("#images-final canvas", (canvas) =>
        canvas instanceof HTMLCanvasElement ? canvas.toDataURL("image/png") : "",
      );
    const first = await finalPixels();
    // Kept for the Classify tab's upload: the edge's "handwritten seven", as the page drew it.
    writeFileSync(join(SCREENSHOTS, "seven.png"), Buffer.from(first.split(",")[1] ?? "", "base64"));
    const generate = async () => {
      await page.click("#images-send");
      await page.waitForFunction(
        () => document.querySelector("#images-state")?.textContent === "done",
      );
    };
    await generate();
    expect(await finalPixels()).toBe(first);
    await setValue(page, "#images-seed", "8");
    await generate();
    expect(await finalPixels()).not.toBe(first);
    await setValue(page, "#images-seed", "7");
  });

  /** Draws strokes (lists of points in a 0–1 box) on the digit canvas with the mouse. */
  async function drawDigit(strokes: ReadonlyArray<ReadonlyArray<readonly [number, number]>>) {
    const box = await (await page.$("#digit-canvas"))?.boundingBox();
    if (!box) throw new Error("no digit canvas");
    for (const stroke of strokes) {
      const [first, ...rest] = stroke;
      if (first === undefined) continue;
      await page.mouse.move(box.x + first[0] * box.width, box.y + first[1] * box.height);
      await page.mouse.down();
      for (const [x, y] of rest)
        await page.mouse.move(box.x + x * box.width, box.y + y * box.height, { steps: 8 });
      await page.mouse.up();
    }
  }

  it("classifies a digit drawn on the canvas with the mouse", async () => {
    await openTab("classify");
    await page.waitForSelector("#classify-image-model option[value=digit-classifier]");
    const best = () =>
      page.waitForFunction(
        () => document.querySelector<HTMLElement>("#classify-image-result")?.dataset.best,
      );
    await drawDigit([
      [
        [0.5, 0.15],
        [0.5, 0.85],
      ],
    ]);
    await best();
    expect(await page.$eval("#classify-image-result", (node) => node.dataset.best)).toBe("1");

    await page.click("#digit-clear");
    await drawDigit([
      [
        [0.25, 0.2],
        [0.75, 0.2],
        [0.4, 0.85],
      ],
    ]);
    await best();
    expect(await page.$eval("#classify-image-result", (node) => node.dataset.best)).toBe("7");
    await page.screenshot({ path: join(SCREENSHOTS, "classify.png") });

    // An uploaded PNG: the seven the Images tab generated.
    await page.click("#digit-clear");
    const upload = await page.$("#classify-image-file");
    await upload?.uploadFile(join(SCREENSHOTS, "seven.png"));
    await best();
    expect(await page.$eval("#classify-image-result", (node) => node.dataset.best)).toBe("7");

    // Text: top-k bars.
    await page.click("#classify-text-form button[type=submit]");
    await page.waitForSelector("#classify-text-result .bars li");
    const labels = await page.$$eval("#classify-text-result .label", (nodes) =>
      nodes.map((node) => node.textContent),
    );
    expect(labels).toEqual(["spam", "ham"]);
  });

  it("replays a sample card's transactions, each with a score and label", async () => {
    await openTab("fraud");
    await page.click("#fraud-replay");
    await page.waitForFunction(() => document.querySelectorAll("#fraud-rows tr").length === 7);
    const labels = await page.$$eval("#fraud-rows tr td:nth-child(6)", (cells) =>
      cells.map((cell) => cell.textContent),
    );
    for (const label of labels) expect(["LEGIT", "SUSPECT", "FRAUD"]).toContain(label);
    const used = await page.$$eval("#fraud-rows tr td:nth-child(7)", (cells) =>
      cells.map((cell) => Number(cell.textContent)),
    );
    expect(used[0]).toBe(0);
    expect(used[6]).toBeGreaterThan(0);

    // A transaction built in the form is scored after the replayed ones.
    await setValue(page, "#fraud-amount", "5.20");
    await setValue(page, "#fraud-method", "chip");
    await setValue(page, "#fraud-mcc", "5411");
    await page.click("#fraud-form button[type=submit]");
    await page.waitForFunction(() => document.querySelectorAll("#fraud-rows tr").length === 8);
    const built = await page.$$eval("#fraud-rows tr:last-child td", (cells) =>
      cells.map((cell) => cell.textContent),
    );
    expect(built.slice(1, 4)).toEqual(["5.20 USD", "merchant-built (5411)", "chip"]);
    expect(["LEGIT", "SUSPECT", "FRAUD"]).toContain(built[5]);
    expect(Number(built[6])).toBeGreaterThan(0);

    // A card the Stripe webhook recorded: its stored history and decision, shown as tables.
    const charge = {
      id: "ch_playground_1",
      object: "charge",
      created: 1569931200,
      amount: 2500,
      currency: "usd",
      status: "succeeded",
      payment_method_details: { type: "card", card: { fingerprint: "playgroundCard1" } },
    };
    const payload = JSON.stringify({
      id: "evt_playground_1",
      object: "event",
      type: "charge.succeeded",
      api_version: "2025-09-30.clover",
      created: charge.created,
      data: { object: charge },
      livemode: false,
    });
    const signature = Stripe.webhooks.generateTestHeaderString({
      payload,
      secret: TEST_SECRETS.STRIPE_WEBHOOK_SECRET,
    });
    const webhook = await fetch(`${base}/v1/webhooks/stripe`, {
      method: "POST",
      headers: { "content-type": "application/json", "stripe-signature": signature },
      body: payload,
    });
    expect(webhook.status, await webhook.text()).toBe(200);
    await page.type("#fraud-card-id", "fingerprint:playgroundCard1");
    await page.click("#fraud-card-form button[type=submit]");
    await page.waitForSelector("#fraud-card table");
    const cells = await page.$$eval("#fraud-card tbody tr td", (tds) =>
      tds.map((td) => td.textContent ?? ""),
    );
    expect(cells).toContain("ch_playground_1");
    expect(cells).toContain("25.00 USD");
    expect(cells.some((cell) => ["LEGIT", "SUSPECT", "FRAUD"].includes(cell))).toBe(true);
    await page.screenshot({ path: join(SCREENSHOTS, "fraud.png") });
  });

  it("shows the API's problem for a bad parameter: title, detail and field", async () => {
    await openTab("images");
    await setValue(page, "#images-steps", "999");
    await page.click("#images-send");
    await page.waitForSelector("#images-error:not([hidden])");
    const text = await page.$eval("#images-error", (node) => node.textContent ?? "");
    expect(text).toMatch(/^400 /);
    expect(text).toContain("Field: steps");
    await setValue(page, "#images-steps", "20");

    await openTab("chat");
    await setValue(page, "#chat-temperature", "7");
    await page.click("#chat-send");
    await page.waitForSelector("#chat-error:not([hidden])");
    expect(await page.$eval("#chat-error", (node) => node.textContent)).toContain(
      "Field: temperature",
    );
    await page.screenshot({ path: join(SCREENSHOTS, "error.png") });
    await setValue(page, "#chat-temperature", "0.8");
  });

  it("shows a text's tokens, and the models with this isolate's gauges", async () => {
    await openTab("tokenizer");
    await page.waitForSelector("#tokenizer-model option[value=tiny-llm]");
    await setValue(page, "#tokenizer-model", "tiny-llm");
    await page.click("#tokenizer-form button[type=submit]");
    await page.waitForSelector("#tokenizer-output .token");
    const tokens = await page.$$eval("#tokenizer-output .token", (nodes) =>
      nodes.map((node) => ({ text: node.textContent, title: node.getAttribute("title") })),
    );
    expect(tokens.map(({ text }) => text).join("")).toContain("old house");
    for (const { title } of tokens) expect(title).toMatch(/^id \d+$/);
    await page.screenshot({ path: join(SCREENSHOTS, "tokenizer.png") });

    await openTab("models");
    await page.waitForFunction(() => document.querySelectorAll("#models-rows tr").length >= 5);
    const rows = await page.$$eval("#models-rows tr", (trs) =>
      trs.map((tr) => [...tr.children].map((cell) => cell.textContent)),
    );
    expect(rows).toContainEqual(expect.arrayContaining(["tiny-llm", "origin (GPU)"]));
    expect(rows).toContainEqual(expect.arrayContaining(["digit-classifier", "edge (WASM)"]));
    await page.waitForSelector("#metrics-charts figure svg polyline");
    const own = await page.$$eval("#tab-charts figcaption", (nodes) =>
      nodes.map((node) => node.textContent ?? ""),
    );
    expect(own.find((caption) => caption.startsWith("requests: "))).toBeDefined();
    expect(own.find((caption) => caption.startsWith("chat tokens/s: "))).toBeDefined();
    // The edge's own request counter (its scrapes left out) grows on the chart with API calls.
    const counted = () =>
      page.$$eval("#traffic-charts figcaption", (nodes) => {
        const caption = nodes
          .map((node) => node.textContent ?? "")
          .find((text) => text.startsWith("edge API requests: "));
        return caption === undefined ? -1 : Number(caption.slice(19).replace(/\D/g, ""));
      });
    // Two scrapes read: the rates are drawn beside the counter.
    await page.waitForFunction(() =>
      [...document.querySelectorAll("#traffic-charts figcaption")].some((node) =>
        node.textContent?.startsWith("edge requests/s: "),
      ),
    );
    const before = await counted();
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 5; i++)
      expect(
        (await fetch(`${base}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } })).status,
      ).toBe(200);
    await page.waitForFunction(
      (least) =>
        [...document.querySelectorAll("#traffic-charts figcaption")].some((node) => {
          const text = node.textContent ?? "";
          return (
            text.startsWith("edge API requests: ") &&
            Number(text.slice(19).replace(/\D/g, "")) >= least
          );
        }),
      { timeout: 10_000 },
      before + 5,
    );
    await page.screenshot({ path: join(SCREENSHOTS, "models.png") });
  });

  it("passes axe-core's WCAG 2 A/AA checks on every tab, and its tabs work from the keyboard", async () => {
    // Runtime.evaluate is not subject to the page's CSP, so axe needs no inline script.
    await page.evaluate(AXE);
    for (const tab of ["chat", "images", "classify", "fraud", "tokenizer", "models"]) {
      await openTab(tab);
      const { violations, passed } = await page.evaluate(async () => {
        const axe = Reflect.get(window, "axe") as {
          run(
            context: Document,
            options: object,
          ): Promise<{
            passes: unknown[];
            violations: Array<{ id: string; nodes: Array<{ target: unknown }> }>;
          }>;
        };
        const result = await axe.run(document, {
          runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] },
        });
        return {
          passed: result.passes.length,
          violations: result.violations.map(
            ({ id, nodes }) => `${id}: ${JSON.stringify(nodes[0]?.target)}`,
          ),
        };
      });
      expect(violations, tab).toEqual([]);
      expect(passed, tab).toBeGreaterThan(5);
    }
    // Arrow keys move between tabs (the ARIA tabs pattern); the chosen tab shows its panel.
    await page.focus("#tab-models");
    await page.keyboard.press("ArrowRight");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("tab-chat");
    expect(await page.$eval("#panel-chat", (panel) => panel.hidden)).toBe(false);
    await page.keyboard.press("ArrowLeft");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("tab-models");
  });

  it("works in a narrow window (no tab scrolls the page sideways)", async () => {
    await page.setViewport({ width: 380, height: 800 });
    for (const tab of ["chat", "images", "classify", "fraud", "tokenizer", "models"]) {
      await openTab(tab);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
      );
      expect(overflow, tab).toBeLessThanOrEqual(0);
    }
    await openTab("chat");
    await page.screenshot({ path: join(SCREENSHOTS, "narrow.png") });
    await page.setViewport({ width: 1200, height: 860 });
  });

  it("raised no page errors and no Content-Security-Policy violations", () => {
    expect(problems).toEqual([]);
  });
});
