// Cloudflare's own AI SDK provider for Workers AI (the `workers-ai-provider` npm package; its
// source is cloudflare/ai, packages/workers-ai-provider), unmodified, against /v1/run/{model}
// inside workerd. The one shim is the binding it is given: `run(model, inputs, options)` POSTs
// the inputs to /v1/run/{model} and answers what the binding answers, its output object, or
// the SSE body when streamed, which is what /v1/run serves. So the provider's own requests
// (messages with an assistant turn's tool_calls and the tool's result, tools in OpenAI's shape,
// tool_choice, response_format) and its own readers of the answers run as they would against
// env.AI.
import { generateObject, generateText, stepCountIs, streamText, tool } from "ai";
import { env, SELF } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { createWorkersAI } from "workers-ai-provider";
import { z } from "zod";
import { perModelKey } from "../../../src/compose";
import { KEY } from "../../support/workers/helpers";

const origin = inject("llmOrigin");

/** The binding's run() over HTTP: what the provider sent, kept for the assertions. */
function bindingOverHttp() {
  const sent: Record<string, unknown>[] = [];
  const binding = {
    async run(model: string, inputs: Record<string, unknown>, options?: { signal?: AbortSignal }) {
      sent.push(inputs);
      const response = await SELF.fetch(`https://edge.test/v1/run/${model}`, {
        method: "POST",
        headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
        body: JSON.stringify(inputs),
        signal: options?.signal ?? null,
      });
      // The binding throws on a refusal; the provider wraps what it throws.
      if (!response.ok) throw new Error(`${response.status}: ${await response.text()}`);
      return inputs.stream === true ? response.body : await response.json();
    },
  };
  return { workersai: createWorkersAI({ binding: binding as unknown as Ai }), sent };
}

describe.skipIf(origin === null)(
  "workers-ai-provider (the AI SDK's Workers AI provider) against /v1/run",
  () => {
    Reflect.set(env, perModelKey("ORIGIN_URL", "tiny-llm"), origin?.url ?? "");
    const Weather = z.object({ city: z.string().max(12), unit: z.enum(["celsius", "fahrenheit"]) });

    it("generateText and streamText agree, text and usage", async () => {
      const { workersai } = bindingOverHttp();
      const request = {
        model: workersai("tiny-llm"),
        system: "You are a storyteller.",
        prompt: "Tell me about the sea.",
        maxOutputTokens: 16,
        temperature: 0,
        maxRetries: 0,
      };
      const generated = await generateText(request);
      expect(generated.text.length).toBeGreaterThan(0);
      expect(generated.usage.outputTokens).toBe(16);
      const streamed = streamText(request);
      let text = "";
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe(generated.text);
      expect((await streamed.usage).outputTokens).toBe(16);
    });

    it(
      "a named tool call, executed, then a second step that sends the " +
        "call (assistant tool_calls) and its result (a tool message) back",
      async () => {
        const { workersai, sent } = bindingOverHttp();
        const seen: unknown[] = [];
        const result = await generateText({
          model: workersai("tiny-llm"),
          tools: {
            get_weather: tool({
              description: "The weather in a city",
              inputSchema: Weather,
              execute: async (input) => (seen.push(input), { forecast: "sunny" }),
            }),
          },
          toolChoice: { type: "tool", toolName: "get_weather" },
          prompt: "What is the weather in Paris?",
          temperature: 0,
          // The tiny LLM's context is 512 tokens: the tools, the call and its result take ~460 of
          // them.
          maxOutputTokens: 40,
          maxRetries: 0,
          stopWhen: stepCountIs(2),
          prepareStep: ({ stepNumber }) =>
            stepNumber === 1 ? { toolChoice: "none" as const } : undefined,
        });
        expect(result.steps).toHaveLength(2);
        const [first, second] = result.steps;
        expect(first?.toolCalls.map((call) => call.toolName)).toEqual(["get_weather"]);
        expect(seen).toHaveLength(1);
        expect(Weather.parse(seen[0])).toEqual(seen[0]);
        expect(second?.text.length).toBeGreaterThan(0);
        // What the provider sent: OpenAI's tool_choice, then the history in its own shapes.
        expect(sent.map((inputs) => inputs.tool_choice)).toEqual([
          { type: "function", function: { name: "get_weather" } },
          "none",
        ]);
        const history = sent[1]?.messages as {
          role: string;
          content: string;
          tool_calls?: { id: string; function: { name: string; arguments: string } }[];
          name?: string;
          tool_call_id?: string;
        }[];
        const assistant = history.find((message) => message.role === "assistant");
        expect(
          assistant?.tool_calls?.map((call) => [
            call.function.name,
            JSON.parse(call.function.arguments) as unknown,
          ]),
        ).toEqual([["get_weather", seen[0]]]);
        const toolResult = history.find((message) => message.role === "tool");
        expect(toolResult).toMatchObject({
          name: "get_weather",
          tool_call_id: assistant?.tool_calls?.[0]?.id,
        });
        expect(JSON.parse(toolResult!.content)).toEqual({ forecast: "sunny" });
        // The call and its result reached the template: the second prompt holds them.
        expect(second!.usage.inputTokens!).toBeGreaterThan(first!.usage.inputTokens! + 20);
      },
    );

    it(
      "streamText with a forced call: the call " + "arrives from the stream's tool_calls frame",
      async () => {
        const { workersai } = bindingOverHttp();
        const streamed = streamText({
          model: workersai("tiny-llm"),
          tools: { get_weather: tool({ inputSchema: Weather }) },
          toolChoice: "required",
          prompt: "What is the weather in Rome?",
          temperature: 0,
          maxRetries: 0,
          maxOutputTokens: 120,
        });
        const calls = await streamed.toolCalls;
        expect(calls.length).toBeGreaterThan(0);
        for (const call of calls) {
          expect(call.toolName).toBe("get_weather");
          expect(Weather.parse(call.input)).toEqual(call.input);
        }
      },
    );

    it(
      "generateObject: Workers AI JSON Mode (response_format " +
        "json_schema), the parsed value read back",
      async () => {
        const { workersai, sent } = bindingOverHttp();
        const Person = z.object({
          name: z.string().max(12),
          age: z.number().int().min(0).max(120),
          color: z.enum(["red", "green", "blue"]),
        });
        const { object } = await generateObject({
          model: workersai("tiny-llm"),
          schema: Person,
          prompt: "Describe a person.",
          maxOutputTokens: 120,
          temperature: 0,
          maxRetries: 0,
        });
        expect(Person.parse(object)).toEqual(object);
        expect((sent[0]!.response_format as { type: string }).type).toBe("json_schema");
      },
    );
  },
);
