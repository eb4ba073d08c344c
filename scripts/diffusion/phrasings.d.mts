// Types of phrasings.mjs for the TypeScript tests that import it.
export interface Phrasing {
  text: string;
  digit: number;
  template: number;
  form: number;
  heldOut: boolean;
}
export const NAMES: string[];
export const HELD_OUT_FILE: string;
export const TEMPLATES: string[];
export function allPhrasings(): Phrasing[];
export function readHeldOut(): { text: string; digit: number }[];
