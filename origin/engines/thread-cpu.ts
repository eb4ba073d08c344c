// CPU time of the calling thread, for the engines' per-run CPU metrics.
import { closeSync, openSync, readSync } from "node:fs";

export type CpuClock = () => number;

/**
 * CPU time of the calling thread, for the engines' per-run CPU metrics. An engine that runs
 * on its own worker thread must not read process.cpuUsage() (it counts every thread: the
 * HTTP work running beside it too), and Node 20 has no process.threadCpuUsage. On Linux the
 * thread's /proc/thread-self/schedstat gives its on-CPU time in nanoseconds (one pread of an
 * fd kept open, ≈ 2 µs); elsewhere the process's CPU time stands in.
 *
 * A clock of this thread's CPU seconds (call it on the thread it measures).
 */
export function threadCpuClock(): CpuClock {
  let fd: number;
  try {
    fd = openSync("/proc/thread-self/schedstat", "r");
  } catch {
    return processCpuSeconds;
  }
  const buffer = Buffer.alloc(96);
  const read = () => {
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return Number(buffer.toString("latin1", 0, length).split(" ", 1)[0]) / 1e9;
  };
  if (!Number.isFinite(read())) {
    closeSync(fd);
    return processCpuSeconds;
  }
  return read;
}

function processCpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}
