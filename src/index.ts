// Worker entry point.
import { env } from "cloudflare:workers";
import { createApp } from "./app";
import { defaultServices, fraudStores, preloadModels } from "./compose";

export { CardHistory } from "./tasks/fraud/ledger/card-history";

// The isolate starts by loading its preloaded models (src/tasks/preload.ts): evaluated with
// the top level, before the first request, like ORT's own start (src/runtime/wasm/ort.ts).
void preloadModels(env);

export default createApp(defaultServices, fraudStores);
