// Types of corpus.mjs for the TypeScript tests that import it.
export interface BrownDocument {
  id: string;
  sentences: string[];
  text: string;
}
export const SPLIT_DESCRIPTION: string;
export function detokenize(tokens: string[]): string;
export function loadSplits(): {
  train: BrownDocument[];
  validation: BrownDocument[];
  test: BrownDocument[];
};
