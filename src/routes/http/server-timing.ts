// Server-Timing header from a task's timings ({ tokenizeMs: 1.2 } → "tokenize;dur=1.20").

export function serverTiming(timings: Record<string, number>): string {
  return Object.entries(timings)
    .map(([name, ms]) => `${name.replace(/Ms$/, "")};dur=${ms.toFixed(2)}`)
    .join(", ");
}
