// A minimal Prometheus registry in text exposition format 0.0.4: counters, gauges read at
// scrape time (so a scrape sees the present state) and histograms; shared by edge and origin.
import { memoWeak } from "../memos";

type Labels = Readonly<Record<string, string>>;

const escapeLabel = (value: string) =>
  value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
const labelText = (labels: Labels) => {
  const entries = Object.entries(labels);
  return entries.length === 0
    ? ""
    : `{${entries.map(([k, v]) => `${k}="${escapeLabel(v)}"`).join(",")}}`;
};
// The series key of a label set, memoized per labels object: the engines pass the same
// object on every token (VllmMetrics.labelsOf), so the hot path does no stringify or sort.
const keys = memoWeak<Labels, string>("metrics.series-keys");
const keyOf = (labels: Labels) => {
  let key = keys.get(labels);
  if (key === undefined) keys.set(labels, (key = JSON.stringify(Object.entries(labels).sort())));
  return key;
};
const num = (value: number) =>
  Number.isFinite(value) ? String(value) : value > 0 ? "+Inf" : value < 0 ? "-Inf" : "NaN";

interface Metric {
  render(): string;
}

/**
 * A counter named without its suffix, as prometheus_client names them: in format 0.0.4 its
 * samples, HELP and TYPE all read `<name>_total`, so the type attaches to the samples.
 */
export class Counter implements Metric {
  private values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels, by = 1): void {
    const key = keyOf(labels);
    const entry = this.values.get(key);
    if (entry === undefined) this.values.set(key, { labels, value: by });
    else entry.value += by;
  }

  render(): string {
    const name = `${this.name}_total`;
    const lines = [`# HELP ${name} ${this.help}`, `# TYPE ${name} counter`];
    for (const { labels, value } of this.values.values())
      lines.push(`${name}${labelText(labels)} ${num(value)}`);
    return lines.join("\n");
  }
}

export class Gauge implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => ReadonlyArray<{ labels: Labels; value: number }>,
  ) {}

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} gauge`];
    for (const { labels, value } of this.read())
      lines.push(`${this.name}${labelText(labels)} ${num(value)}`);
    return lines.join("\n");
  }
}

/** A counter whose value is read at scrape time (e.g. the process's CPU seconds). */
export class ScrapedCounter implements Metric {
  constructor(
    readonly name: string,
    readonly help: string,
    private readonly read: () => number,
  ) {}

  render(): string {
    return [
      `# HELP ${this.name} ${this.help}`,
      `# TYPE ${this.name} counter`,
      `${this.name} ${num(this.read())}`,
    ].join("\n");
  }
}

export class Histogram implements Metric {
  private series = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[],
  ) {}

  observe(labels: Labels, value: number): void {
    const key = keyOf(labels);
    let entry = this.series.get(key);
    if (entry === undefined)
      this.series.set(
        key,
        (entry = { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 }),
      );
    for (let i = this.buckets.length - 1; i >= 0 && value <= this.buckets[i]!; i--)
      entry.counts[i]! += 1;
    entry.sum += value;
    entry.count += 1;
  }

  render(): string {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { labels, counts, sum, count } of this.series.values()) {
      this.buckets.forEach((bound, i) =>
        lines.push(`${this.name}_bucket${labelText({ ...labels, le: num(bound) })} ${counts[i]}`),
      );
      lines.push(`${this.name}_bucket${labelText({ ...labels, le: "+Inf" })} ${count}`);
      lines.push(
        `${this.name}_sum${labelText(labels)} ${num(sum)}`,
        `${this.name}_count${labelText(labels)} ${count}`,
      );
    }
    return lines.join("\n");
  }
}

export class Registry {
  private metrics: Metric[] = [];

  add<M extends Metric>(metric: M): M {
    this.metrics.push(metric);
    return metric;
  }

  render(): string {
    return `${this.metrics.map((metric) => metric.render()).join("\n")}\n`;
  }
}
