// Types for parse-prometheus-text-format (it ships none): the families it parses.
declare module "parse-prometheus-text-format" {
  export interface PrometheusFamily {
    name: string;
    help: string;
    type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED";
    metrics: { labels?: Record<string, string>; value?: string }[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
