// Worker entry point.
import { createApp } from "./app";

export default createApp();
