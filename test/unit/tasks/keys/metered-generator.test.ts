// The metered generator reserves prompt + max_tokens before the first event and settles, however
// the generation ends, to exactly the tokens the generator counted; a refusal is thrown before
// anything is generated.
import { describe, expect, it } from "vitest";
import { meteredGenerator, type TokenMeter } from "../../../../src/tasks/keys/metered-generator";
import type {
  GenerationOptions,
  TextEvent,
  TextGenerator,
} from "../../../../src/tasks/text-generation/text-generation";

/** A generator of `tokens` one-token events that reports its usage as the real one does. */
function fake(tokens: number): TextGenerator {
  return {
    manifest: { generation: { contextLength: 64 } } as TextGenerator["manifest"],
    load: async () => {},
    prepare: async () => ({ ids: [1, 2, 3] }),
    async *generate(prompt, options): AsyncGenerator<TextEvent> {
      let generated = 0;
      const usage = () => ({
        prompt_tokens: prompt.ids.length,
        completion_tokens: generated,
        total_tokens: prompt.ids.length + generated,
      });
      try {
        for (; generated < tokens; ) {
          generated += 1;
          yield { type: "text", text: "x" };
        }
      } finally {
        options.onUsage?.(usage());
      }
      yield { type: "done", finishReason: "length", stopReason: null, usage: usage() };
    },
  };
}

function meter(refuse = false) {
  const calls: string[] = [];
  const value: TokenMeter = {
    async reserve(tokens) {
      calls.push(`reserve ${tokens}`);
      if (refuse) throw new Error("429");
      return "r1";
    },
    settle(id, usage) {
      calls.push(`settle ${id} ${usage?.total_tokens ?? 0}`);
    },
  };
  return { calls, value };
}

const options = (maxTokens: number | undefined): GenerationOptions => ({
  maxTokens,
  sampling: {} as GenerationOptions["sampling"],
  stop: [],
});

describe("meteredGenerator", () => {
  it("settles a finished generation to its usage", async () => {
    const { calls, value } = meter();
    const events = [];
    for await (const event of meteredGenerator(fake(5), value).generate(
      { ids: [1, 2, 3] },
      options(10),
      new AbortController().signal,
    ))
      events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "done" });
    expect(calls).toEqual(["reserve 13", "settle r1 8"]);
  });

  it("settles a consumer that leaves after 4 tokens to exactly 3 + 4", async () => {
    const { calls, value } = meter();
    const stream = meteredGenerator(fake(50), value).generate(
      { ids: [1, 2, 3] },
      options(undefined),
      new AbortController().signal,
    );
    for (let i = 0; i < 4; i++) await stream.next();
    await stream.return(undefined);
    // Without max_tokens the reservation is the whole context (64).
    expect(calls).toEqual(["reserve 64", "settle r1 7"]);
  });

  it("throws the refusal before anything is generated", async () => {
    const { calls, value } = meter(true);
    const stream = meteredGenerator(fake(5), value).generate(
      { ids: [1, 2, 3] },
      options(10),
      new AbortController().signal,
    );
    await expect(stream.next()).rejects.toThrow("429");
    expect(calls).toEqual(["reserve 13"]);
  });
});
