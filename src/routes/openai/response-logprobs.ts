// OpenAI's logprobs in responses: chat's per-token entries with their alternatives, and the
// completions API's lists (vLLM's CompletionLogProbs).
import { z } from "@hono/zod-openapi";
import { clampLogprob } from "../../protocols/vllm-logprobs";
import type { TokenLogprobs, TokenText } from "../../tasks/text-generation/text-generation";

const TopLogprob = z
  .object({
    token: z.string().openapi({
      description:
        "The token's text alone (an unfinished UTF-8 character reads as U+FFFD; see bytes)",
    }),
    logprob: z.number().openapi({
      description:
        "Its log-probability under the model (before temperature and truncation), at least -9999",
    }),
    bytes: z.array(z.number().int()).nullable().openapi({ description: "The token's own bytes" }),
  })
  .openapi("TopLogprob");
const ChatTokenLogprob = TopLogprob.extend({
  top_logprobs: z.array(TopLogprob).openapi({
    description: "The top_logprobs likeliest tokens at this position, likeliest first",
  }),
}).openapi("ChatCompletionTokenLogprob");
export const ChatLogprobs = z
  .object({ content: z.array(ChatTokenLogprob).nullable(), refusal: z.null() })
  .nullable()
  .openapi("ChatCompletionLogprobs", {
    description:
      "With logprobs: true, one entry per generated token (a stop token included); null otherwise",
  });
export const CompletionLogprobs = z
  .object({
    text_offset: z.array(z.number().int()).openapi({
      description:
        "As vLLM's: where each token starts, counting the " +
        "text sent before and the tokens' own lengths",
    }),
    token_logprobs: z.array(z.number().nullable()),
    tokens: z.array(z.string()),
    top_logprobs: z.array(z.record(z.string(), z.number()).nullable()).openapi({
      description:
        "Per token: itself, then the `logprobs` likeliest tokens (up to logprobs + 1 entries)",
    }),
  })
  .nullable()
  .openapi("CompletionLogprobs", {
    description:
      "With logprobs: n, one entry per generated token (a stop token included), after " +
      "one per prompt token with echo (the first: null logprob and dict); null otherwise",
  });

const topLogprob = ({ token, bytes, logprob }: TokenText) => ({
  token,
  logprob: clampLogprob(logprob),
  bytes,
});

/** OpenAI's chat logprobs: each token, and its top_logprobs alternatives. */
export function chatLogprobs(logprobs: readonly TokenLogprobs[]): z.infer<typeof ChatLogprobs> {
  return {
    content: logprobs.map((entry) => ({
      ...topLogprob(entry),
      top_logprobs: entry.top.map(topLogprob),
    })),
    refusal: null,
  };
}
