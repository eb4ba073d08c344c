// Mid-stream continuation's request (src/runtime/origin/continuation.ts): the ids generated so
// far join the prompt, the budget shrinks by them, and requests whose meaning would change on
// another replica (structured outputs, presence or frequency penalties) are not continued.
import { describe, expect, it } from "vitest";
import { GREEDY } from "../../../../src/generation/sampling-params";
import type { GenerationRequest } from "../../../../src/runtime";
import { continuable, continuation } from "../../../../src/runtime/origin/continuation";

const request: GenerationRequest = {
  promptIds: [1, 2, 3],
  maxTokens: 10,
  minTokens: 4,
  sampling: { ...GREEDY, repetitionPenalty: 1.2 },
  stopTokenIds: [0],
  logprobs: 2,
  promptLogprobs: 1,
};

describe("continuation", () => {
  it("continues from the prompt and the ids already generated, with what is left", () => {
    expect(continuation(request, [7, 8, 9])).toEqual({
      promptIds: [1, 2, 3, 7, 8, 9],
      maxTokens: 7,
      minTokens: 1,
      sampling: request.sampling,
      stopTokenIds: [0],
      logprobs: 2,
    });
    expect(continuation(request, [7, 8, 9, 10, 11]).minTokens).toBe(0);
  });

  it("continues plain and seeded sampling, not structured outputs or output penalties", () => {
    expect(continuable(request)).toBe(true);
    expect(continuable({ ...request, sampling: { ...GREEDY, temperature: 1, seed: 3 } })).toBe(
      true,
    );
    expect(continuable({ ...request, sampling: { ...GREEDY, presencePenalty: 0.5 } })).toBe(false);
    expect(continuable({ ...request, sampling: { ...GREEDY, frequencyPenalty: 0.5 } })).toBe(false);
    const structured: GenerationRequest["structured"] = {
      spec: { json_object: true },
      matcher: () => {
        throw new Error("not used");
      },
    };
    expect(continuable({ ...request, structured })).toBe(false);
  });
});
