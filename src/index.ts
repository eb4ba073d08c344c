// Worker entry point.
import { createApp } from "./app";

export { CardHistory } from "./storage/card-history";

export default createApp();
