// Bytes as hex: every byte value, from a Uint8Array and from an ArrayBuffer, read against Node's
// own hex encoding.
import { describe, expect, it } from "vitest";
import { toHex } from "../../../src/protocols/hex";

describe("toHex", () => {
  const every = Uint8Array.from({ length: 256 }, (_, byte) => byte);

  it("writes each byte as two lowercase digits, in order", () => {
    expect(toHex(every)).toBe(Buffer.from(every).toString("hex"));
    expect(toHex(every.buffer)).toBe(Buffer.from(every).toString("hex"));
    expect(toHex(Uint8Array.of(0, 10, 255))).toBe("000aff");
  });

  it("reads a view's own bytes, not its whole buffer", () => {
    expect(toHex(every.subarray(254))).toBe("feff");
  });

  it("writes nothing for no bytes", () => {
    expect(toHex(new Uint8Array(0))).toBe("");
  });
});
