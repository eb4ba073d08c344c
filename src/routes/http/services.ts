// How a route finds the model services (built by the app that mounts the routes).
import { createMiddleware } from "hono/factory";
import type { FraudStores } from "../../tasks/fraud/ledger/ledger";
import type { Services } from "../../tasks";
import type { Principal } from "../../tasks/keys/authenticate";
import type { LimitSnapshot } from "../../tasks/keys/limit-windows";
import type { RequestUsage } from "./audit";
import type { DeferredCount } from "./limits";

export type AppEnv = {
  Bindings: Env;
  Variables: {
    services: Services;
    fraudStores: (env: Env) => FraudStores;
    requestId: string;
    /** Who the request's key is: set by the auth middleware (routes/http/auth.ts). */
    principal: Principal;
    /** The key's latest limit count, for the x-ratelimit-* headers (routes/http/limits.ts). */
    limits: LimitSnapshot;
    /** What the request's generations used, for its audit row (routes/http/audit.ts). */
    usage: RequestUsage;
    /** A limited key's request count, deferred to its first reservation (limits.ts). */
    requestCount: DeferredCount;
  };
};

/** Hands routes what the composition root built; routes never build runtimes or stores. */
export function provideServices(
  servicesFor: (env: Env) => Services,
  fraudStores?: (env: Env) => FraudStores,
) {
  return createMiddleware<AppEnv>(async (c, next) => {
    c.set("services", servicesFor(c.env));
    if (fraudStores !== undefined) c.set("fraudStores", fraudStores);
    return next();
  });
}
