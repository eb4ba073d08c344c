// Types of gc-trace.mjs for the TypeScript tests that import it.
export interface GcSummary {
  isolate: string | undefined;
  full: {
    ms: number;
    reason: string;
    afterMb: number;
    globalAfterMb: number;
    globalLimitMb: number;
  }[];
  young: number[];
  kept: number;
}
export interface GcRecord {
  index: number;
  v8Ms: number;
  isolate: string;
  full: boolean;
  ms: number;
  reason: string;
  heap: { start: number; end: number };
  global: { start: number; end: number; limit: number };
}
export function records(lines: string[]): GcRecord[];
export function gcSummary(lines: string[]): GcSummary;
export function fullPauses(lines: string[], isolate: string | undefined): number[];
export function retained(
  lines: string[],
  isolate: string | undefined,
): { heap: number; outside: number };
export function formatGc(summary: Pick<GcSummary, "full" | "young">): {
  full: number;
  fullPausesMs: string;
  reasons: string;
  liveAfterMb: string;
  globalAfterMb: string;
  globalLimitMb: string;
  young: number;
  youngTotalMs: string;
  youngMaxMs: string;
};
