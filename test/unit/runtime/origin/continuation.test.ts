// Mid-stream continuation's request (src/runtime/origin/continuation.ts): the ids generated so
// far join the prompt, marked as output so far, and the budget shrinks by them; requests whose
// meaning would change if that output were read as prompt (structured outputs, presence or
// frequency penalties) need a replica that takes the mark.
import { describe, expect, it } from "vitest";
import { GREEDY } from "../../../../src/generation/sampling-params";
import type { GenerationRequest } from "../../../../src/runtime";
import { continuation, needsOutputPrefix } from "../../../../src/runtime/origin/continuation";

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
      outputPrefixTokens: 3,
      maxTokens: 7,
      minTokens: 1,
      sampling: request.sampling,
      stopTokenIds: [0],
      logprobs: 2,
    });
    expect(continuation(request, [7, 8, 9, 10, 11]).minTokens).toBe(0);
    // A second switch marks the output of both replicas.
    expect(continuation(continuation(request, [7, 8]), [9]).outputPrefixTokens).toBe(3);
  });

  it("needs the output mark for structured outputs and output penalties, not otherwise", () => {
    const continued = continuation(request, [7]);
    expect(needsOutputPrefix(request)).toBe(false);
    expect(needsOutputPrefix(continued)).toBe(false);
    const seeded = { ...continued, sampling: { ...GREEDY, temperature: 1, seed: 3 } };
    expect(needsOutputPrefix(seeded)).toBe(false);
    expect(needsOutputPrefix({ ...continued, sampling: { ...GREEDY, presencePenalty: 0.5 } })).toBe(
      true,
    );
    expect(
      needsOutputPrefix({ ...continued, sampling: { ...GREEDY, frequencyPenalty: 0.5 } }),
    ).toBe(true);
    const structured: GenerationRequest["structured"] = {
      spec: { json_object: true },
      matcher: () => {
        throw new Error("not used");
      },
    };
    expect(needsOutputPrefix({ ...continued, structured })).toBe(true);
    expect(needsOutputPrefix({ ...request, structured })).toBe(false);
  });
});
