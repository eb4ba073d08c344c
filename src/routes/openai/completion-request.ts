// The OpenAI-compatible request body of POST /v1/completions: its four prompt forms (a batch
// among them), the shared sampling fields and the legacy logprobs and echo.
import { z } from "@hono/zod-openapi";
import { MAX_LOGPROBS } from "../../generation/logprobs";
import { neutral, refused } from "./field-policies";
import { MAX_TOKEN_ID, samplingFields } from "./sampling-fields";

/**
 * A token id, checked by hand for prompts of token ids: a schema per id costs ~0.3 µs (0.13 ms for
 * 440 ids).
 */
const isTokenId = (id: unknown): boolean =>
  Number.isInteger(id) && (id as number) >= 0 && (id as number) <= MAX_TOKEN_ID;

const PROMPT_MAX = 1_000_000;
/**
 * Most prompts one request may batch (OpenAI's list form, as lm-evaluation-harness sends its
 * batches): each is a generation of its own, run six at a time (a Worker invocation's open
 * connections); streamed, at most six generations in all (prompts × n).
 */
export const MAX_PROMPTS = 64;

/** One prompt of a request: its text or token ids, and the field that names it in errors. */
export type PromptItem = { text: string; field: string } | { ids: number[]; field: string };

/**
 * OpenAI's four prompt forms: a string, a list of token ids (sent to the model as they are,
 * without a BOS, as vLLM does), or a list of either (a batch: one generation per prompt,
 * choices indexed prompt × n + choice, as vLLM's). Numbers come first in the element union (a
 * list of ids tries one member per id, not two), and ids are checked by hand in the transform.
 */
const Prompt = z
  .union(
    [
      z.string().max(PROMPT_MAX),
      z
        .array(
          z.union([z.number(), z.string().max(PROMPT_MAX), z.array(z.number()).max(PROMPT_MAX)]),
        )
        .max(PROMPT_MAX),
    ],
    {
      error: "expected a string, a list of token ids, or a list of these",
    },
  )
  .transform((prompt, context): PromptItem[] => {
    if (typeof prompt === "string") {
      if (prompt.length === 0) context.addIssue({ code: "custom", message: "must not be empty" });
      return [{ text: prompt, field: "prompt" }];
    }
    if (prompt.length === 0) {
      context.addIssue({ code: "custom", message: "must not be empty" });
      return z.NEVER;
    }
    const listed = typeof prompt[0] !== "number";
    if (listed && prompt.length > MAX_PROMPTS) {
      context.addIssue({
        code: "custom",
        message: `at most ${MAX_PROMPTS} prompts per request, got ${prompt.length}`,
      });
      return z.NEVER;
    }
    const items = listed ? prompt : [prompt];
    return items.map((single, at): PromptItem => {
      const prefix = listed ? [at] : [];
      const field = listed ? `prompt.${at}` : "prompt";
      if (typeof single === "string") {
        if (single.length === 0)
          context.addIssue({ code: "custom", message: "must not be empty", path: prefix });
        return { text: single, field };
      }
      if (typeof single === "number") {
        context.addIssue({
          code: "custom",
          message: "a batch holds strings or lists of token ids, not ids alone",
          path: prefix,
        });
        return { ids: [], field };
      }
      const ids = single as unknown[];
      if (ids.length === 0)
        context.addIssue({ code: "custom", message: "must not be empty", path: prefix });
      const bad = ids.findIndex((id) => !isTokenId(id));
      if (bad !== -1)
        context.addIssue({
          code: "custom",
          message: "a token id is an integer from 0",
          path: [...prefix, bad],
        });
      return { ids: ids as number[], field };
    });
  })
  .openapi({
    description:
      "A string, a list of token ids (sent as they are, no BOS added), or a list of up to " +
      `${MAX_PROMPTS} of these (a batch: choice i·n + j is prompt i's choice j)`,
    example: "Once upon a time",
  });

export const CompletionRequest = z
  .object({
    ...samplingFields,
    prompt: Prompt,
    logprobs: z
      .number()
      .int()
      .min(0)
      .max(MAX_LOGPROBS)
      .nullish()
      .openapi({
        description:
          "Each generated token's log-probability and this many likeliest tokens at its position " +
          `(0–${MAX_LOGPROBS}, vLLM's bound)`,
      }),
    // vLLM's and OpenAI's legacy completions: 0 only with echo (the prompt scored, nothing
    // generated).
    max_tokens: z
      .number()
      .int()
      .min(0)
      .max(1_000_000)
      .nullish()
      .openapi({
        description:
          "Most tokens to generate (default 16); 0 only with echo: the prompt alone, scored with " +
          "logprobs",
      }),
    top_logprobs: neutral(z.literal(0), "0"),
    echo: z
      .boolean()
      .nullish()
      .openapi({
        description:
          "The prompt's text before the completion's; with logprobs, the prompt's tokens' " +
          "logprobs before the completion's (the first token has none), as lm-evaluation-harness " +
          "reads them",
      }),
    suffix: refused("suffix"),
  })
  .strict()
  .openapi("CompletionRequest");
export type CompletionRequest = z.infer<typeof CompletionRequest>;
