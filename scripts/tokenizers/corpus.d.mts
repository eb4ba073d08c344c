export interface CorpusEntry {
  kind: string;
  text: string;
}
export function seededRandom(seed: number): () => number;
export function buildCorpus(seed?: number): CorpusEntry[];
