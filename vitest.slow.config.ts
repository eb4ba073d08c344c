// The slow tier (`npm run test:slow`): long corpora, closed loops, soaks and checks against the
// running service. `.ci/run` runs it after the fast tier, so nothing leaves CI.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "slow",
          include: ["test/slow/**/*.test.ts"],
          environment: "node",
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
