// The measurement Worker of scripts/bench-tokenizers.mjs, run in workerd by Miniflare: one
// tokenizer file (compact or tokenizer.json) as a Data module, loaded on /load, then the
// texts POSTed to /encode are encoded and their ids decoded on /decode, timed inside the
// isolate. The bench reads the heap through the inspector between the steps.
import { Tokenizer } from "@huggingface/tokenizers";
import { CompactTokenizer } from "../../src/tokenizers/compact-tokenizer";
// A Data module the bench supplies (an ArrayBuffer).
import data from "./tokenizer.data";

let tokenizer;
let ids = [];

function load(kind) {
  if (kind === "compact") {
    const compact = new CompactTokenizer(data);
    return { encode: (text) => compact.encode(text), decode: (list) => compact.decode(list) };
  }
  const json = JSON.parse(new TextDecoder().decode(data));
  const hf = new Tokenizer(json, {});
  return {
    encode: (text) => hf.encode(text, { add_special_tokens: false }).ids,
    decode: (list) => hf.decode(list),
  };
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.pathname === "/ping") return new Response("pong");
    if (url.pathname === "/load") {
      const started = performance.now();
      tokenizer = load(url.searchParams.get("kind") ?? "compact");
      const loaded = performance.now();
      tokenizer.encode("Hello, world! Ready?");
      const ready = performance.now();
      const hashStarted = performance.now();
      await crypto.subtle.digest("SHA-256", data);
      return Response.json({
        loadMs: loaded - started,
        readyMs: ready - started,
        sha256Ms: performance.now() - hashStarted,
        bytes: data.byteLength,
      });
    }
    if (tokenizer === undefined) return new Response("load first", { status: 409 });
    const loaded = tokenizer;
    if (url.pathname === "/encode") {
      const texts = await request.json();
      const started = performance.now();
      ids = texts.map((text) => loaded.encode(text));
      const ms = performance.now() - started;
      const keep = url.searchParams.get("keep") === "1";
      const tokens = ids.reduce((n, list) => n + list.length, 0);
      if (!keep) ids = [];
      return Response.json({ ms, tokens });
    }
    if (url.pathname === "/decode") {
      const started = performance.now();
      let chars = 0;
      for (const list of ids) chars += loaded.decode(list).length;
      return Response.json({ ms: performance.now() - started, chars });
    }
    return new Response("not found", { status: 404 });
  },
};
