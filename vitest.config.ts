// The fast tier (`npm test`): pure code in Node, and the Worker itself inside workerd through
// the Workers Vitest integration, with local R2, D1 (migrations applied) and Durable Objects.
// The workerd tests share one runtime (`isolate: false`): starting a workerd and its bundle per
// file was two thirds of the suite's time. The few files that need a fresh isolate (what start-up
// preloads, what one isolate's memory holds) run in a project of their own.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig, type TestProjectInlineConfiguration } from "vitest/config";
import { TEST_SECRETS } from "./test/support/secrets";

const FRESH_ISOLATE = [
  "test/workers/isolate/preload.test.ts",
  "test/workers/openai/images/parity.test.ts",
  "test/workers/isolate/drift-metrics.test.ts",
];

const POOL = ["test/workers/pool/**/*.test.ts"];

const workers = (
  name: string,
  test: NonNullable<TestProjectInlineConfiguration["test"]>,
): TestProjectInlineConfiguration => ({
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.jsonc" },
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
    name,
    setupFiles: ["test/support/workers/apply-migrations.ts"],
    testTimeout: 30_000,
    ...test,
  },
});

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
      workers("workers", {
        include: ["test/workers/**/*.test.ts"],
        exclude: [...FRESH_ISOLATE, ...POOL],
        isolate: false,
        globalSetup: [
          "test/support/setup/ibm-models.ts",
          "test/support/setup/origin.ts",
          "test/support/setup/llm-origin.ts",
          "test/support/setup/images-origin.ts",
        ],
      }),
      // Three more origin processes, started only for the pool's tests.
      workers("workers-pool", {
        include: POOL,
        isolate: false,
        globalSetup: ["test/support/setup/origin-pool.ts"],
      }),
      workers("workers-isolated", {
        include: FRESH_ISOLATE,
        globalSetup: ["test/support/setup/images-origin.ts"],
      }),
    ],
  },
});
