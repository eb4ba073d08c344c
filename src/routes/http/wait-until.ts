// Work that outlives the answer (an audit row, a key's last use, a budget's settlement): handed
// to the Worker's waitUntil, or, where there is no execution context (app.request in tests),
// left to run. A failure is logged, never thrown at the client.
import type { Context } from "hono";

export function waitUntil(c: Context, work: Promise<unknown>, what: string): void {
  const logged = work.catch((error: unknown) =>
    console.error(JSON.stringify({ event: "background_failed", what, error: String(error) })),
  );
  try {
    c.executionCtx.waitUntil(logged);
  } catch {
    // No execution context (a test's app.request): the promise runs on its own.
  }
}
