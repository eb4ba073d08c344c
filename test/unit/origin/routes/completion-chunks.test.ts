// The origin's streamed completion chunks are written from a per-request template
// (origin/routes/completion-chunks.ts) instead of JSON.stringify of a chunk object per
// token: the bytes must be exactly those JSON.stringify writes for vLLM's chunk shape
// (member order as vllm-project/vllm vllm/entrypoints/openai/protocol.py
// CompletionStreamResponse / CompletionResponseStreamChoice; the route's own test pins
// that shape to vLLM's source), with and without logprobs. The logprobs themselves follow
// serving_completion.py `_create_completion_logprobs` (origin/routes/completion-logprobs.ts).
import { describe, expect, it } from "vitest";
import {
  chunkWriter,
  type ChunkHead,
  type TokenChunk,
} from "../../../../origin/routes/completion-chunks";
import { completionLogprobs } from "../../../../origin/routes/completion-logprobs";

const reference = (head: ChunkHead, chunk: TokenChunk) =>
  `data: ${JSON.stringify({
    ...head,
    choices: [
      {
        index: 0,
        text: "",
        logprobs: chunk.logprobs,
        finish_reason: chunk.finishReason,
        stop_reason: chunk.stopReason,
        prompt_token_ids: chunk.promptTokenIds,
        token_ids: chunk.withIds ? chunk.tokenIds : null,
      },
    ],
    usage: chunk.usage,
  })}\n\n`;

describe("completion chunk template", () => {
  const heads: ChunkHead[] = [
    {
      id: "cmpl-0123456789abcdef0123456789abcdef",
      object: "text_completion",
      created: 1_790_000_000,
      model: "tiny-llm",
    },
    { id: 'cmpl-"quoted"\\', object: "text_completion", created: 0, model: 'a "model"\n/ü' },
  ];
  const chunks: TokenChunk[] = [
    {
      tokenIds: [0],
      finishReason: null,
      stopReason: null,
      promptTokenIds: [1, 2, 3],
      withIds: true,
      usage: null,
      logprobs: null,
    },
    {
      tokenIds: [511, 3, 4, 5],
      finishReason: null,
      stopReason: null,
      promptTokenIds: null,
      withIds: true,
      usage: null,
      logprobs: null,
    },
    {
      tokenIds: [7],
      finishReason: "length",
      stopReason: null,
      promptTokenIds: null,
      withIds: false,
      usage: { prompt_tokens: 3, total_tokens: 35, completion_tokens: 32 },
      logprobs: null,
    },
    {
      tokenIds: [9, 42],
      finishReason: "stop",
      stopReason: 42,
      promptTokenIds: [],
      withIds: true,
      usage: { prompt_tokens: 0, total_tokens: 1, completion_tokens: 1 },
      logprobs: null,
    },
    {
      tokenIds: [2],
      finishReason: "stop",
      stopReason: null,
      promptTokenIds: null,
      withIds: false,
      usage: null,
      logprobs: null,
    },
    // With logprobs: one token and its dict, several (a stream interval), -Infinity and tiny
    // values, a None entry.
    {
      tokenIds: [55],
      finishReason: null,
      stopReason: null,
      promptTokenIds: [1, 5, 6],
      withIds: true,
      usage: null,
      logprobs: completionLogprobs(
        [55],
        [
          {
            logprob: -0.25,
            top: [
              [55, -0.25],
              [12, -1.5],
              [300, -3.125],
            ],
          },
        ],
      ),
    },
    {
      tokenIds: [9, 42, 2],
      finishReason: "stop",
      stopReason: 42,
      promptTokenIds: null,
      withIds: true,
      usage: { prompt_tokens: 3, total_tokens: 7, completion_tokens: 4 },
      logprobs: completionLogprobs(
        [9, 42, 2],
        [
          { logprob: -1e-7, top: [[9, -1e-7]] },
          {
            logprob: -Infinity,
            top: [
              [1, -0.1],
              [3, -Math.LN10],
            ],
          },
          undefined,
        ],
      ),
    },
    {
      tokenIds: [7],
      finishReason: "length",
      stopReason: null,
      promptTokenIds: null,
      withIds: false,
      usage: null,
      logprobs: completionLogprobs([7], [{ logprob: -12.5, top: [] }]),
    },
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

describe("completion logprobs (vLLM's CompletionLogProbs)", () => {
  it(
    "names tokens token_id:N, puts the sampled one first in each " +
      "dict, then the top in rank order without repeating an id",
    () => {
      const logprobs = completionLogprobs(
        [12, 55],
        [
          {
            logprob: -1.5,
            top: [
              [55, -0.25],
              [12, -1.5],
              [300, -3.125],
            ],
          },
          {
            logprob: -0.25,
            top: [
              [55, -0.25],
              [12, -1.5],
            ],
          },
        ],
      );
      expect(Object.keys(logprobs)).toEqual([
        "text_offset",
        "token_logprobs",
        "tokens",
        "top_logprobs",
      ]);
      expect(logprobs.tokens).toEqual(["token_id:12", "token_id:55"]);
      expect(logprobs.token_logprobs).toEqual([-1.5, -0.25]);
      expect(logprobs.top_logprobs.map((top) => Object.entries(top ?? {}))).toEqual([
        [
          ["token_id:12", -1.5],
          ["token_id:55", -0.25],
          ["token_id:300", -3.125],
        ],
        [
          ["token_id:55", -0.25],
          ["token_id:12", -1.5],
        ],
      ]);
      // vLLM's offsets: the text sent before, then each previous token string's length.
      expect(logprobs.text_offset).toEqual([0, "token_id:12".length]);
      expect(
        completionLogprobs([12, 55, 7], [undefined, undefined, undefined], 4).text_offset,
      ).toEqual([4, 15, 26]);
    },
  );

  it(
    "clamps -Infinity to -9999 as vLLM does, and writes " +
      "vLLM's None entry for a token without logprobs",
    () => {
      const logprobs = completionLogprobs(
        [3, 4],
        [
          {
            logprob: -Infinity,
            top: [
              [0, -0.5],
              [3, -Infinity],
            ],
          },
          undefined,
        ],
      );
      expect(logprobs.token_logprobs).toEqual([-9999, null]);
      expect(logprobs.top_logprobs).toEqual([{ "token_id:3": -9999, "token_id:0": -0.5 }, null]);
      expect(logprobs.tokens).toEqual(["token_id:3", "token_id:4"]);
      expect(JSON.stringify(logprobs)).toBe(
        '{"text_offset":[0,10],"token_logprobs":[-9999,null],"tokens":["token_id:3",' +
          '"token_id:4"],"top_logprobs":[{"token_id:3":-9999,"token_id:0":-0.5},null]}',
      );
    },
  );

  it("with logprobs 0 keeps the sampled token alone in its dict", () => {
    expect(completionLogprobs([8], [{ logprob: -2, top: [] }]).top_logprobs).toEqual([
      { "token_id:8": -2 },
    ]);
  });
});
