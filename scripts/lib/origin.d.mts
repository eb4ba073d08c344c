// Types of origin.mjs for the TypeScript tests that import it.
import type { ChildProcess } from "node:child_process";
export function startOrigin(
  env?: Record<string, string>,
): Promise<{ url: string; process: ChildProcess; stop: () => Promise<void> }>;
