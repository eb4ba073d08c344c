// CPU time of this process's main thread — the one that runs the isolate's JS and WASM in the
// in-isolate benchmarks — apart from V8's compile and GC threads, which `process.cpuUsage()`
// counts too. The scheduler's run time (/proc/self/task/<pid>/schedstat, nanoseconds). Linux only.
import { readFileSync } from "node:fs";

/** Milliseconds the main thread has run (NaN where /proc is not there). */
export function mainThreadCpuMs(): number {
  try {
    return Number(readFileSync(`/proc/self/task/${process.pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
  } catch {
    return NaN;
  }
}
