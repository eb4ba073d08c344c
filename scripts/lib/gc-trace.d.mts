// Types of gc-trace.mjs for the TypeScript tests that import it.
export interface GcSummary {
  isolate: string | undefined;
  full: { ms: number; afterMb: number }[];
  young: number[];
  kept: number;
}
export function gcSummary(lines: string[]): GcSummary;
export function fullPauses(lines: string[], isolate: string | undefined): number[];
export function formatGc(summary: Pick<GcSummary, "full" | "young">): {
  full: number;
  fullPausesMs: string;
  liveAfterMb: string;
  young: number;
  youngTotalMs: string;
  youngMaxMs: string;
};
