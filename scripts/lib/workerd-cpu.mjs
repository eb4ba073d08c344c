// CPU time of the workerd process that `wrangler dev` started (all its threads, ns precision
// from /proc/<pid>/task/*/schedstat), so cold-start phases can be measured as CPU spent by
// the isolate's process rather than wall time, which a shared machine inflates. Linux only:
// NaN elsewhere.
import { readdirSync, readFileSync } from "node:fs";

function parentAndName(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const name = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(fields[1]), name };
  } catch {
    return undefined;
  }
}

/** The pids of the workerd processes below `root` (wrangler dev runs two: the Worker's and
 * its dev proxy's; which is which is not visible from outside, so both are counted). */
export function findWorkerd(root) {
  let pids;
  try {
    pids = readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return undefined;
  }
  const stats = new Map(pids.map((pid) => [pid, parentAndName(pid)]));
  const inTree = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [pid, s] of stats) {
      if (s !== undefined && !inTree.has(pid) && inTree.has(s.ppid)) {
        inTree.add(pid);
        grew = true;
      }
    }
  }
  return [...inTree].filter((pid) => stats.get(pid)?.name === "workerd");
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
