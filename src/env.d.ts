// Bindings `wrangler types` cannot generate: optional secrets ([secrets] lists only required ones)
// and optional variables (absent from wrangler.jsonc's vars).
interface OptionalSecrets {
  /** A pool of origin replicas as JSON (docs/operations.md, "Origin pools"); or ORIGIN_URL. */
  ORIGIN_POOL?: string;
  /** Two of the pool's versions side by side (docs/operations.md, "Canary"). */
  ORIGIN_CANARY?: string;
  /** Bearer key for the GPU origin, when it asks for one (`wrangler secret put ORIGIN_API_KEY`). */
  ORIGIN_API_KEY?: string;
}
interface Env extends OptionalSecrets {}
declare namespace Cloudflare {
  interface Env extends OptionalSecrets {}
}
