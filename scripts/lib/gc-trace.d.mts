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
