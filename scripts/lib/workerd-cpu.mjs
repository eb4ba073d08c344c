// CPU time of the workerd process that `wrangler dev` started (all its threads, ns precision
// from /proc/<pid>/task/*/schedstat), so cold-start phases can be measured as CPU spent by
// the isolate's process rather than wall time, which a shared machine inflates. Linux only:
// NaN elsewhere.
import { readdirSync, readFileSync } from "node:fs";
import { processTree } from "./process-cpu.mjs";

/** The pids of the workerd processes below `root` (wrangler dev runs two: the Worker's and
 * its dev proxy's; which is which is not visible from outside, so both are counted). */
export function findWorkerd(root) {
  const tree = processTree(root);
  return tree === undefined
    ? undefined
    : [...tree].filter(([, s]) => s?.name === "workerd").map(([pid]) => pid);
}

/** CPU milliseconds all threads of the processes `pids` have run (NaN when none is readable). */
export function processCpuMs(pids) {
  const each = pids.map(threadsCpuMs).filter((ms) => !Number.isNaN(ms));
  return each.length === 0 ? Number.NaN : each.reduce((a, b) => a + b, 0);
}

function threadsCpuMs(pid) {
  try {
    let ns = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${task}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // a thread that ended between the listing and the read
      }
    }
    return ns / 1e6;
  } catch {
    return Number.NaN;
  }
}

/** CPU milliseconds of the processes' main threads only (where workerd runs the isolates'
 * JavaScript), without V8's helper threads (background compilation, GC). */
export function mainThreadCpuMs(pids) {
  const each = pids
    .map((pid) => {
      try {
        return (
          Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6
        );
      } catch {
        return Number.NaN;
      }
    })
    .filter((ms) => !Number.isNaN(ms));
  return each.length === 0 ? Number.NaN : each.reduce((a, b) => a + b, 0);
}
