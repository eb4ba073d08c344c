// The API key: typed by the user when the service requires one, kept in this tab's session
// storage only (never local storage, never a cookie) and sent only to this origin (src/api.ts).
const STORAGE_NAME = "edge-inference-api-key";

export function readKey(): string {
  return sessionStorage.getItem(STORAGE_NAME) ?? "";
}

export function writeKey(key: string): void {
  if (key === "") sessionStorage.removeItem(STORAGE_NAME);
  else sessionStorage.setItem(STORAGE_NAME, key);
}
