// Types of dataset.mjs for the TypeScript tests that import it.
export interface Email {
  id: string;
  label: 0 | 1;
  text: string;
}
export const SPLIT_DESCRIPTION: string;
export function prepareText(text: string, maxChars: number): string;
export function emailToText(raw: string): string;
export function loadSplits(): { train: Email[]; validation: Email[]; test: Email[] };
