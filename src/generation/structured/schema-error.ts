// What a structured-output format may hold, and the error for one this service cannot enforce:
// shared by the schema compiler, the regex compiler and the token matcher, edge and origin alike.

/** A schema this service cannot enforce; `path` is a JSON Pointer into the schema. */
export class SchemaError extends Error {
  constructor(
    readonly path: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Limits on one request's format: nesting, enum sizes, properties, and the most ways an output
 * may stand open at once (a union's options that all take the bytes so far: each costs a walk of
 * the vocabulary trie per step, so 80 string options would stall a batch).
 */
export const SCHEMA_LIMITS = {
  depth: 32,
  enumValues: 1024,
  properties: 256,
  openWays: 64,
} as const;
