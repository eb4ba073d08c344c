// Runs the tiny LLM's decoder-with-past ONNX graph (CONTRACTS.md) with either
// onnxruntime-node or onnxruntime-web: feeds for left-padded rows, greedy decoding with a
// KV cache (prefill, then one token per step feeding present.* back as past_key_values.*).
export function emptyPast(ort, generation, batch) {
  const past = {};
  for (let l = 0; l < generation.layers; l += 1) {
    for (const kind of ["key", "value"]) {
      past[`past_key_values.${l}.${kind}`] = new ort.Tensor("float32", new Float32Array(0), [
        batch,
        generation.kvHeads,
        0,
        generation.headDim,
      ]);
    }
  }
  return past;
}

const int64 = (ort, values, dims) =>
  new ort.Tensor("int64", BigInt64Array.from(values, BigInt), dims);

/** Logits [rows, seq, vocab] of full rows (no cache, no padding). */
export async function forward(ort, session, generation, rows) {
  const batch = rows.length;
  const seq = rows[0].length;
  const out = await session.run({
    input_ids: int64(ort, rows.flat(), [batch, seq]),
    attention_mask: int64(ort, new Array(batch * seq).fill(1), [batch, seq]),
    position_ids: int64(
      ort,
      rows.flatMap(() => Array.from({ length: seq }, (_, i) => i)),
      [batch, seq],
    ),
    ...emptyPast(ort, generation, batch),
  });
  return out.logits;
}

function argmax(data, offset, length) {
  let best = 0;
  // ties: lowest id
  for (let i = 1; i < length; i += 1) if (data[offset + i] > data[offset + best]) best = i;
  return best;
}

/**
 * Greedy continuation of several prompts in one left-padded batch with a KV cache.
 * Returns the new ids per row and the last-position logits of the prefill per row.
 */
export async function greedyBatch(ort, session, generation, prompts, newTokens) {
  const batch = prompts.length;
  const width = Math.max(...prompts.map((p) => p.length));
  const vocab = generation.vocabSize;
  const mask = prompts.map((p) => [
    ...new Array(width - p.length).fill(0),
    ...new Array(p.length).fill(1),
  ]);
  const ids = prompts.map((p) => [...new Array(width - p.length).fill(0), ...p]);
  const positions = prompts.map((p) => [
    ...new Array(width - p.length).fill(0),
    ...p.map((_, i) => i),
  ]);
  const next = prompts.map((p) => p.length);
  let feeds = {
    input_ids: int64(ort, ids.flat(), [batch, width]),
    attention_mask: int64(ort, mask.flat(), [batch, width]),
    position_ids: int64(ort, positions.flat(), [batch, width]),
    ...emptyPast(ort, generation, batch),
  };
  const outputs = prompts.map(() => []);
  let prefillLogits;
  for (let step = 0; step < newTokens; step += 1) {
    const out = await session.run(feeds);
    const seq = out.logits.dims[1];
    const data = out.logits.data;
    const chosen = [];
    for (let row = 0; row < batch; row += 1) {
      const offset = (row * seq + seq - 1) * vocab;
      if (step === 0) (prefillLogits ??= [])[row] = Array.from(data.slice(offset, offset + vocab));
      chosen.push(argmax(data, offset, vocab));
    }
    chosen.forEach((id, row) => outputs[row].push(id));
    mask.forEach((m) => m.push(1));
    const past = {};
    for (let l = 0; l < generation.layers; l += 1) {
      for (const kind of ["key", "value"])
        past[`past_key_values.${l}.${kind}`] = out[`present.${l}.${kind}`];
    }
    feeds = {
      input_ids: int64(ort, chosen, [batch, 1]),
      attention_mask: int64(ort, mask.flat(), [batch, mask[0].length]),
      position_ids: int64(
        ort,
        next.map((n) => n + step),
        [batch, 1],
      ),
      ...past,
    };
  }
  return { ids: outputs, prefillLogits };
}

/** Evaluation windows over one document — the same protocol as scripts/llm/data.py windows(). */
export function* windows(length, context, stride) {
  let start = 0;
  let scored = 1;
  for (;;) {
    const end = Math.min(start + context, length);
    yield { start, end, scored };
    if (end === length) return;
    scored = end;
    start = end - (context - stride);
  }
}
