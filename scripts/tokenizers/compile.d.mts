export function byteLevelAlphabet(): Map<string, number>;
export function compileTokenizer(json: unknown, config?: Record<string, unknown>): Uint8Array;
