// Counts every request for /metrics under the route template that answered it (Hono's matched
// path, such as /v1/fraud/cards/:card), never the raw URL, so no card id or key reaches a label.
import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import { recordRequest } from "../../tasks/metrics/edge-metrics";

/**
 * Mounted first, so it sees the final status (errors rendered, refusals of the guards). Its
 * cost is a clock read and in-memory counters after the response is built: no I/O, no await.
 */
export const countRequests: MiddlewareHandler = async (c, next) => {
  const start = performance.now();
  await next();
  recordRequest(c.req.method, routePath(c), c.res.status, (performance.now() - start) / 1000);
};
