// The origin's streamed completion chunks are written from a per-request template
// (origin/routes/completion-chunks.ts) instead of JSON.stringify of a chunk object per
// token: the bytes must be exactly those JSON.stringify writes for vLLM's chunk shape
// (member order as vllm-project/vllm vllm/entrypoints/openai/protocol.py
// CompletionStreamResponse / CompletionResponseStreamChoice; the route's own test pins
// that shape to vLLM's source).
import { describe, expect, it } from "vitest";
import { chunkWriter, type ChunkHead, type TokenChunk } from "../../origin/routes/completion-chunks";

const reference = (head: ChunkHead, chunk: TokenChunk) =>
  `data: ${JSON.stringify({
    ...head,
    choices: [
      {
        index: 0, text: "", logprobs: null, finish_reason: chunk.finishReason, stop_reason: chunk.stopReason,
        prompt_token_ids: chunk.promptTokenIds, token_ids: chunk.withIds ? chunk.tokenIds : null,
      },
    ],
    usage: chunk.usage,
  })}\n\n`;

describe("completion chunk template", () => {
  const heads: ChunkHead[] = [
    { id: "cmpl-0123456789abcdef0123456789abcdef", object: "text_completion", created: 1_790_000_000, model: "tiny-llm" },
    { id: 'cmpl-"quoted"\\', object: "text_completion", created: 0, model: 'a "model"\n/ü' },
  ];
  const chunks: TokenChunk[] = [
    { tokenIds: [0], finishReason: null, stopReason: null, promptTokenIds: [1, 2, 3], withIds: true, usage: null },
    { tokenIds: [511, 3, 4, 5], finishReason: null, stopReason: null, promptTokenIds: null, withIds: true, usage: null },
    { tokenIds: [7], finishReason: "length", stopReason: null, promptTokenIds: null, withIds: false, usage: { prompt_tokens: 3, total_tokens: 35, completion_tokens: 32 } },
    { tokenIds: [9, 42], finishReason: "stop", stopReason: 42, promptTokenIds: [], withIds: true, usage: { prompt_tokens: 0, total_tokens: 1, completion_tokens: 1 } },
    { tokenIds: [2], finishReason: "stop", stopReason: null, promptTokenIds: null, withIds: false, usage: null },
  ];
  it("writes exactly the bytes JSON.stringify writes for the chunk object", () => {
    for (const head of heads) {
      const write = chunkWriter(head);
      for (const chunk of chunks) {
        const text = write(chunk);
        expect(text).toBe(reference(head, chunk));
        expect(JSON.parse(text.slice(6))).toEqual(JSON.parse(reference(head, chunk).slice(6)));
      }
    }
  });
});
