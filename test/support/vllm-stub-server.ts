// CLI for the stub vLLM origin (test/support/vllm-stub-origin.ts), for the benchmark:
//   tsx test/support/vllm-stub-server.ts [modelDir] [graph]   → prints "stub listening on URL"
import { startVllmStub } from "./vllm-stub-origin";

const stub = await startVllmStub(process.argv[2] ?? "models/tiny-llm", process.argv[3]);
console.log(`stub listening on ${stub.url}`);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => void stub.close().then(() => process.exit(0)));
