// Two projects: pure code in Node (tokenizer parity against the Rust `tokenizers`, held-out
// evaluation, featurizer fixtures), and the Worker itself inside workerd through the
// Workers Vitest integration, with local R2, D1 (migrations applied) and Durable Objects.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_SECRETS } from "./test/secrets";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["test/unit/**/*.test.ts"],
          environment: "node",
          testTimeout: 60_000,
        },
      },
      {
        plugins: [
          cloudflareTest(async () => ({
            wrangler: { configPath: "./wrangler.toml" },
            miniflare: {
              bindings: {
                ...TEST_SECRETS,
                ALLOW_ANONYMOUS: "false",
                TEST_MIGRATIONS: await readD1Migrations("migrations"),
              },
              // A second database that never gets the migrations (webhooks answer 503 not_configured).
              d1Databases: { EMPTY_DB: "empty-db" },
            },
          })),
        ],
        test: {
          name: "workers",
          include: ["test/workers/**/*.test.ts"],
          setupFiles: ["test/workers/apply-migrations.ts"],
          globalSetup: [
            "test/workers/ibm-setup.ts",
            "test/workers/origin-setup.ts",
            "test/workers/generation-setup.ts",
            "test/workers/images-setup.ts",
          ],
          testTimeout: 30_000,
        },
      },
    ],
  },
});
