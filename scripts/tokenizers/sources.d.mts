export const REFERENCE_TOKENIZERS: Record<string, string>;
export function tokenizerFiles(dir: string): { json: string; config: string | null };
export function compactTokenizer(dir: string): Uint8Array;
