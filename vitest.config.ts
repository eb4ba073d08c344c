// Two projects: pure code in Node (tokenizer parity against the Rust `tokenizers`, numeric
// helpers), and the Worker itself inside workerd through the Workers Vitest integration.
import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: { name: "unit", include: ["test/unit/**/*.test.ts"], environment: "node", testTimeout: 60_000 },
      },
      {
        plugins: [
          cloudflareTest({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: { bindings: { API_KEYS: "test-key-1,test-key-2", ALLOW_ANONYMOUS: "false" } },
          }),
        ],
        test: { name: "workers", include: ["test/workers/**/*.test.ts"], testTimeout: 30_000 },
      },
    ],
  },
});
