// workerd CPU per streamed token, for Workers that stream the same completion (the edge, the
// relay Worker's variants): each cell runs `streams` concurrent requests per round, rounds
// interleaved across cells so a shared machine's drift hits every cell alike. CPU is the
// schedstat run time (ns) of the Worker's workerd threads, with and without wrangler's proxy.
import { workerdCpuSeconds } from "./process-cpu.mjs";

/**
 * Streams one request; the tokens it carried (vLLM chunks: token_ids; OpenAI chunks: one per
 * non-empty text).
 */
export async function tokensOf(url, body, headers = {}) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  const frames = (await response.text())
    .split("\n\n")
    .filter((frame) => frame.startsWith("data: {"));
  return frames
    .map((frame) => JSON.parse(frame.slice(6)).choices?.[0])
    .reduce((n, choice) => n + (choice?.token_ids?.length ?? (choice?.text ? 1 : 0)), 0);
}

/**
 * Measures cells `{ name, server: { url, pid, headers? }, url, body }` (headers: its API key); each
 * comes back with `ms` (both workerd processes) and `workerMs` (the Worker's workerd alone) summed
 * over `tokens`, and per-round ms per token in `rounds` (both) and `workerRounds` (the Worker's
 * alone).
 */
export async function cpuPerToken(cells, { rounds, streams }) {
  const measured = cells.map((cell) => ({
    ...cell,
    ms: 0,
    workerMs: 0,
    tokens: 0,
    rounds: [],
    workerRounds: [],
  }));
  for (const cell of measured) await tokensOf(cell.url, cell.body, cell.server.headers);
  for (let round = 0; round < rounds; round += 1) {
    for (const cell of measured) {
      const exceptPort = Number(new URL(cell.server.url).port);
      const cpu = () => [
        workerdCpuSeconds(cell.server.pid, { precise: true }),
        workerdCpuSeconds(cell.server.pid, { exceptPort, precise: true }),
      ];
      const [all0, worker0] = cpu();
      const tokens = (
        await Promise.all(
          Array.from({ length: streams }, () => tokensOf(cell.url, cell.body, cell.server.headers)),
        )
      ).reduce((a, b) => a + b, 0);
      const [all1, worker1] = cpu();
      cell.ms += (all1 - all0) * 1000;
      cell.workerMs += (worker1 - worker0) * 1000;
      cell.tokens += tokens;
      cell.rounds.push((((all1 - all0) * 1000) / tokens).toFixed(3));
      cell.workerRounds.push((((worker1 - worker0) * 1000) / tokens).toFixed(3));
    }
  }
  return measured;
}
