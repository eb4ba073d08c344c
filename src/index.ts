// Worker entry point: the app, the Durable Object classes, and the isolate's start.
import { createApp } from "./app";
import { fraudStores } from "./compose";
import { isolate } from "./isolate";

export { CardHistory } from "./cards";
export { KeyLimiter } from "./tasks/keys/key-limiter";

// The isolate starts by loading its preloaded models: evaluated with the top level, before the
// first request, like ORT's own start.
void isolate.preload();

export default createApp(isolate.services, fraudStores);
