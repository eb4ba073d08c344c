// Types of wrangler-dev.mjs for the TypeScript tests that import it.
export function startWranglerDev(options: {
  persistTo: string;
  vars: Record<string, string>;
  inspector?: boolean;
  config?: string;
  cwd?: string;
}): Promise<{
  url: string;
  pid: number;
  inspectorUrl?: string;
  startMs: number;
  stop: () => void;
  kill: (signal: NodeJS.Signals) => Promise<void>;
}>;
