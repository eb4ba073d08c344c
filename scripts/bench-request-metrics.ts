// What counting a request for /metrics costs, side by side in one run: the same Hono app (the
// request-id middleware, a guarded sub-app, a route with a parameter) with and without the
// edge's countRequests middleware (src/routes/http/request-metrics.ts), plus the app without it
// twice more as the noise floor. Timed in Node: inside workerd, timers only advance on I/O.
// Usage: npm run bench:metrics [-- --requests 20000]
import { parseArgs } from "node:util";
import { Hono } from "hono";
import { requestId } from "hono/request-id";
import { countRequests } from "../src/routes/http/request-metrics";
import { timeInterleaved } from "./lib/stats.mjs";

const { values: options } = parseArgs({
  options: { requests: { type: "string", default: "20000" } },
});
const BATCH = 100;
const batches = Math.ceil(Number(options.requests) / BATCH);

function app(counted: boolean) {
  const fraud = new Hono();
  fraud.use("*", async (_c, next) => await next());
  fraud.get("/cards/:card", (c) => c.json({ card: c.req.param("card"), decisions: [] }));
  const root = new Hono();
  if (counted) root.use(countRequests);
  root.use(requestId());
  root.route("/v1/fraud", fraud);
  return root;
}

/** BATCH requests to a card's route (a new card each), one timing per batch. */
const run = (target: Hono) => async (i: number) => {
  for (let j = 0; j < BATCH; j++) {
    const response = await target.request(`/v1/fraud/cards/card-${i}-${j}`);
    if (response.status !== 200) throw new Error(`status ${response.status}`);
  }
};

const [plain, counted, plainAgain] = await timeInterleaved(
  [run(app(false)), run(app(true)), run(app(false))],
  { inputs: batches, block: 10, warmupMs: 2000 },
);
if (plain === undefined || counted === undefined || plainAgain === undefined) throw new Error();
const us = (ms: number) => ((ms / BATCH) * 1000).toFixed(2);
console.log(`${batches * BATCH} requests each, interleaved in blocks of ${10 * BATCH}; µs/request`);
console.log("| app | p50 | p99 | ratio (p50) to without |");
console.log("|---|---|---|---|");
console.log(`| without countRequests | ${us(plain.p50)} | ${us(plain.p99)} | 1.00 |`);
console.log(
  `| with countRequests | ${us(counted.p50)} | ${us(counted.p99)} | ` +
    `${(counted.p50 / plain.p50).toFixed(2)} |`,
);
console.log(
  `| without, again (noise) | ${us(plainAgain.p50)} | ${us(plainAgain.p99)} | ` +
    `${(plainAgain.p50 / plain.p50).toFixed(2)} |`,
);
