// The playground's page, script and styles served by the Worker (src/routes/playground) inside
// workerd: each file byte for byte with its type and the self-only Content-Security-Policy,
// revalidated by ETag; API answers carry none of those headers.
import { SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import page from "../../../playground/public/index.html";
import script from "../../../playground/public/app.js";
import styles from "../../../playground/public/styles.css";
import { BASE } from "../../support/workers/fraud";

// The files as the Text rule reads them (the pool reads wrangler.jsonc's rules as wrangler does).
const TEXT: Record<string, string> = { "index.html": page, "app.js": script, "styles.css": styles };
const FILES: [path: string, file: string, type: string][] = [
  ["/", "index.html", "text/html"],
  ["/index.html", "index.html", "text/html"],
  ["/app.js", "app.js", "text/javascript"],
  ["/styles.css", "styles.css", "text/css"],
];

describe("the playground's files", () => {
  it.each(FILES)("GET %s is playground/public/%s as %s", async (path, file, type) => {
    const response = await SELF.fetch(`${BASE}${path}`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(`${type}; charset=utf-8`);
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/https?:|\*|unsafe/);
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const body = await response.text();
    expect(body).toBe(TEXT[file]);
    expect(body.length).toBeGreaterThan(1000);
  });

  it("answers 304 to the ETag it gave, and the file again to another", async () => {
    const first = await SELF.fetch(`${BASE}/app.js`);
    await first.arrayBuffer();
    const tag = first.headers.get("etag");
    expect(tag).toMatch(/^(W\/)?"[^"]+"$/);
    const again = await SELF.fetch(`${BASE}/app.js`, { headers: { "if-none-match": tag ?? "" } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const other = await SELF.fetch(`${BASE}/app.js`, { headers: { "if-none-match": '"stale"' } });
    expect(other.status).toBe(200);
    await other.arrayBuffer();
  });

  it("HEAD gives the headers without the body; other files and API answers carry no CSP", async () => {
    const head = await SELF.fetch(`${BASE}/styles.css`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toBe("text/css; charset=utf-8");
    expect(await head.text()).toBe("");
    for (const path of ["/_headers", "/no-such-page", "/playground/public/app.js"]) {
      const missing = await SELF.fetch(`${BASE}${path}`);
      expect(missing.status, path).toBe(404);
      expect(missing.headers.get("content-type"), path).toContain("application/problem+json");
      await missing.arrayBuffer();
    }
    const api = await SELF.fetch(`${BASE}/v1/models`);
    expect(api.headers.get("content-security-policy")).toBeNull();
    await api.arrayBuffer();
  });
});
