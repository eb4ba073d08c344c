// CPU time (user + system, seconds) of a process and all its descendants, read from
// /proc: a benchmark's cost measure that holds on a shared machine, where wall time
// depends on what else runs. Linux only; returns NaN elsewhere.
import { readdirSync, readFileSync } from "node:fs";

const TICKS = 100; // USER_HZ on Linux

function stat(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    const name = text.slice(text.indexOf("(") + 1, text.lastIndexOf(")"));
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    return {
      ppid: Number(fields[1]),
      name,
      cpu: (Number(fields[11]) + Number(fields[12])) / TICKS,
    };
  } catch {
    return undefined;
  }
}

/**
 * The pids of `root` and all its descendants, with their /proc stat (Linux; undefined elsewhere).
 */
export function processTree(root) {
  let pids;
  try {
    pids = readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return undefined;
  }
  const stats = new Map(pids.map((pid) => [pid, stat(pid)]));
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
  return new Map([...inTree].map((pid) => [pid, stats.get(pid)]));
}

/**
 * @param {number} root @param {(pid: number) => boolean} [keep] which processes of the tree to
 * count @param {{ precise?: boolean }} [options] `precise`: nanosecond run times from schedstat
 * (for deltas over long-lived processes) instead of 10 ms ticks
 */
export function treeCpuSeconds(root, keep = () => true, { precise = false } = {}) {
  const tree = processTree(root);
  if (tree === undefined) return Number.NaN;
  const kept = [...tree].filter(([pid]) => keep(pid));
  if (precise) return kept.reduce((sum, [pid]) => sum + preciseCpuSeconds(pid), 0);
  return kept.reduce((sum, [, s]) => sum + (s?.cpu ?? 0), 0);
}

/** A process's CPU seconds to the nanosecond: the sum of its live threads' schedstat (the
 * scheduler's run time), where /proc/<pid>/stat counts 10 ms ticks. Threads that exited are
 * not counted, so it is for deltas over long-lived processes (workerd's threads). */
function preciseCpuSeconds(pid) {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`))
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
  } catch {
    // the process or a thread ended meanwhile
  }
  return ns / 1e9;
}

/**
 * CPU seconds of the workerd processes under `root` (wrangler dev's tree). wrangler dev runs two:
 * its proxy, listening on the dev server's own port, and the Worker's runtime behind it.
 * @param {number} root
 * @param {{ exceptPort?: number, precise?: boolean }} [options] `exceptPort`: leave out the
 *   workerd listening on this port (the proxy, a wrangler dev artifact a deployed Worker does not
 *   pay for);
 *   `precise`: nanosecond run times from schedstat (for deltas) instead of 10 ms ticks
 */
export function workerdCpuSeconds(root, { exceptPort, precise = false } = {}) {
  const isWorkerd = (pid) => {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      return (
        cmdline.includes("workerd") &&
        (exceptPort === undefined || !cmdline.includes(`=127.0.0.1:${exceptPort}\0`))
      );
    } catch {
      return false;
    }
  };
  return treeCpuSeconds(root, isWorkerd, { precise });
}
