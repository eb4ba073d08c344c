// A sample's value from a Prometheus text rendering (src/protocols/prometheus.ts): the first
// line of the metric (labelled or not), with `labels` in it if given; 0 when absent.
export function metricValue(rendered: string, name: string, labels = ""): number {
  const line = rendered
    .split("\n")
    .find((l) => l.startsWith(name) && /[{ ]/.test(l.charAt(name.length)) && l.includes(labels));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(" ") + 1));
}
