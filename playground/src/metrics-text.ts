// Prometheus text (format 0.0.4) as the Models tab charts it: one figure per metric name.
/** `name{labels} value` lines of Prometheus text, summed per metric name. */
export function parseMetrics(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{[^}]*\})?\s+(\S+)/.exec(line);
    if (match?.[1] === undefined || match[2] === undefined) continue;
    const value = Number(match[2]);
    if (Number.isFinite(value)) sums.set(match[1], (sums.get(match[1]) ?? 0) + value);
  }
  return sums;
}
