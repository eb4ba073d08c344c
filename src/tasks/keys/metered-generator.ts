// A text generator that charges a key's token budget: before a generation starts it reserves
// the prompt's tokens plus its max_tokens (or what the context leaves), and when the generation
// ends, however it ends, it settles to what was used, so a cancelled stream is refunded.
import type { TextGenerator, Usage } from "../text-generation/text-generation";

export interface TokenMeter {
  /** Reserves `tokens` or throws the refusal (a 429 ServiceError). Returns the reservation's id. */
  reserve(tokens: number): Promise<string>;
  /** Settles a reservation to what the generation used (undefined: nothing, it never started). */
  settle(id: string, usage: Usage | undefined): void;
}

export function meteredGenerator(
  generator: TextGenerator,
  meter: TokenMeter,
  keyId?: string,
): TextGenerator {
  const { contextLength } = generator.manifest.generation;
  return {
    manifest: generator.manifest,
    load: () => generator.load(),
    prepare: (input, maxTokens, truncate) => generator.prepare(input, maxTokens, truncate),
    async *generate(prompt, options, signal) {
      const maxTokens = options.maxTokens ?? contextLength - prompt.ids.length;
      const id = await meter.reserve(prompt.ids.length + Math.max(0, maxTokens));
      let usage: Usage | undefined;
      try {
        yield* generator.generate(
          prompt,
          {
            ...options,
            ...(keyId === undefined ? {} : { keyId }),
            onUsage: (ended) => {
              usage = ended;
              options.onUsage?.(ended);
            },
          },
          signal,
        );
      } finally {
        meter.settle(id, usage);
      }
    },
  };
}
