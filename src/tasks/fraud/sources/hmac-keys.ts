// A provider's HMAC-SHA256 keys, imported once per isolate per configured value (not per event):
// the latest four values (a rotation adds one), and how many imports there were (tests hold it to
// one per value). Each provider keeps its own as a named memo (src/memos).

export interface HmacKeys {
  /** The imported key for a configured value; undefined when the value is not a valid key. */
  key(configured: string): Promise<CryptoKey | undefined>;
  imports(): number;
  /** The memo's hooks: values held, and forgetting them. */
  entries(): number;
  clear(): void;
}

/** Keys made from each configured value's bytes by `raw` (undefined: not a key). */
export function hmacKeys(raw: (configured: string) => Uint8Array | undefined): HmacKeys {
  const byValue = new Map<string, Promise<CryptoKey | undefined>>();
  let imports = 0;
  return {
    key(configured) {
      let key = byValue.get(configured);
      if (key === undefined) {
        const bytes = raw(configured);
        imports++;
        key =
          bytes === undefined
            ? Promise.resolve(undefined)
            : crypto.subtle.importKey("raw", bytes, { name: "HMAC", hash: "SHA-256" }, false, [
                "sign",
              ]);
        if (byValue.size >= 4) byValue.delete(byValue.keys().next().value ?? "");
        byValue.set(configured, key);
      }
      return key;
    },
    imports: () => imports,
    entries: () => byValue.size,
    clear: () => byValue.clear(),
  };
}
