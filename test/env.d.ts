// Bindings only the test harness adds (vitest.config.ts).
declare namespace Cloudflare {
  interface Env {
    TEST_MIGRATIONS: import("cloudflare:test").D1Migration[];
    /** A D1 database left without migrations (the not_configured tests). */
    EMPTY_DB: D1Database;
  }
}
