// Prometheus text (format 0.0.4) as the Models tab reads it: each sample with its labels, and
// one figure per gauge or counter name for the isolate's gauges.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Families the traffic charts show as rates (traffic.ts), not as gauges. */
const TRAFFIC = /^edge_(http_|prompt_tokens|generation_tokens|time_to_first_token)/;

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const [, key, value] of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g))
    if (key !== undefined && value !== undefined)
      labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
  return labels;
}

/** Every `name{labels} value` line with a finite value; comments and broken lines skipped. */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (match?.[1] === undefined || match[3] === undefined) continue;
    const value = Number(match[3]);
    if (Number.isFinite(value))
      samples.push({ name: match[1], labels: parseLabels(match[2] ?? ""), value });
  }
  return samples;
}

/** The gauges and counters, labelled samples summed per metric name (traffic and histograms apart). */
export function parseMetrics(text: string): Map<string, number> {
  const sums = new Map<string, number>();
  for (const { name, value } of parseSamples(text)) {
    if (TRAFFIC.test(name) || /_(bucket|sum|count)$/.test(name)) continue;
    sums.set(name, (sums.get(name) ?? 0) + value);
  }
  return sums;
}
