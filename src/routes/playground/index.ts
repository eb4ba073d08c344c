// The playground's page, script and styles (playground/public, the script built by
// `npm run playground:build`), served by the Worker itself from text modules (wrangler.jsonc's
// Text rule). Not Workers static assets: any `assets` entry puts Workers' router Worker in front
// of every request, the payment webhooks' too, and locally in the Worker's own thread (its
// Requests, Responses and Headers, 4, 2 and 6 more a webhook, swept in the Worker's pauses:
// docs/fraud.md "What the tail is made of"). Public, like the API reference page; documented in
// openapi.json with the 304 its ETag gives.
import { OpenAPIHono } from "@hono/zod-openapi";
import { etag } from "hono/etag";
import page from "../../../playground/public/index.html";
import script from "../../../playground/public/app.js";
import styles from "../../../playground/public/styles.css";
import type { AppEnv } from "../http/services";

/** Everything loads from this origin only; no inline script or style, no data: or blob: URLs. */
const HEADERS = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; " +
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  // Revalidated on every load (ETag): a new deploy's script is never mixed with an old page.
  "cache-control": "no-cache",
};

/** The playground's files by path, as the page names them, with their media types. */
const FILES: Record<string, { body: string; type: string; id: string; what: string }> = {
  "/": { body: page, type: "text/html", id: "playgroundPage", what: "The playground's page" },
  "/index.html": {
    body: page,
    type: "text/html",
    id: "playgroundIndexHtml",
    what: "The playground's page",
  },
  "/app.js": { body: script, type: "text/javascript", id: "playgroundScript", what: "Its script" },
  "/styles.css": { body: styles, type: "text/css", id: "playgroundStyles", what: "Its styles" },
};

export const playgroundRoutes = new OpenAPIHono<AppEnv>();
// hono/etag on these paths only (it hashes each body it sees).
const revalidated = etag();
for (const [path, { body, type, id, what }] of Object.entries(FILES)) {
  playgroundRoutes.get(path, revalidated, (c) =>
    c.body(body, 200, { ...HEADERS, "content-type": `${type}; charset=utf-8` }),
  );
  playgroundRoutes.openAPIRegistry.registerPath({
    method: "get",
    path,
    operationId: id,
    summary: what,
    security: [],
    responses: {
      200: { description: what, content: { [type]: { schema: { type: "string" } } } },
      304: { description: "Not modified: the If-None-Match header names its ETag" },
    },
  });
}
