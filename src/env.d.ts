// Bindings `wrangler types` cannot generate: optional secrets ([secrets] lists only required ones).
interface OptionalSecrets {
  /** Bearer key for the GPU origin, when it asks for one (`wrangler secret put ORIGIN_API_KEY`). */
  ORIGIN_API_KEY?: string;
}
interface Env extends OptionalSecrets {}
declare namespace Cloudflare {
  interface Env extends OptionalSecrets {}
}
