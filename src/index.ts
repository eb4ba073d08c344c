// Worker entry point.
import { createApp } from "./app";
import { defaultServices, fraudStores } from "./compose";

export { CardHistory } from "./storage/card-history";

export default createApp(defaultServices, fraudStores);
