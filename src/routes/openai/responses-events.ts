// The Responses API's typed SSE events for a started generation: one message's text, or the
// function_call items of a generation with tools (streamed or not).
import type { z } from "@hono/zod-openapi";
import type { ServiceError } from "../../errors/service-error";
import type { TokenLogprobs } from "../../tasks/text-generation/text-generation";
import { toolReader, type ToolMode } from "../../tasks/text-generation/tool-parsers";
import { sseResponse } from "../http/event-stream";
import { collect, type startGeneration } from "./generation-stream";
import { type Base, ended, failed, inProgress } from "./responses-object";
import {
  callId,
  entries,
  eventWriter,
  messageItem,
  OutputItems,
  type OutputMessage,
  type OutputItem,
} from "./responses-output";

type Started = Awaited<ReturnType<typeof startGeneration>>;

/** Ends a Responses stream: its last event (response.completed …) ends it, or response.failed. */
const responsesEnd = (
  write: ReturnType<typeof eventWriter>,
  base: Base,
  output: () => OutputItem[],
) => ({
  end: () => "",
  error: (failure: ServiceError) =>
    write("response.failed", { response: failed(base, failure, output()) }),
  failure: "response_failed_mid_stream",
});

/**
 * One assistant message streamed as OpenAI's typed events: its output_text deltas (with their
 * logprobs when asked for), then the .done events and response.completed or response.incomplete.
 */
export function messageEvents(
  base: Base,
  started: Started,
  itemId: string,
  withLogprobs: boolean,
): Response {
  const write = eventWriter();
  const at = { item_id: itemId, output_index: 0, content_index: 0 };
  let text = "";
  /** Every token's logprobs so far, and those not yet sent (a delta's text may be held back). */
  const all: TokenLogprobs[] = [];
  const pending: TokenLogprobs[] = [];
  const take = () => entries(pending.splice(0));
  return sseResponse(started, {
    opening: () =>
      write("response.created", { response: inProgress(base) }) +
      write("response.in_progress", { response: inProgress(base) }) +
      write("response.output_item.added", {
        output_index: 0,
        item: {
          type: "message",
          id: itemId,
          status: "in_progress",
          role: "assistant",
          content: [],
        },
      }) +
      write("response.content_part.added", {
        ...at,
        part: { type: "output_text", text: "", annotations: [], logprobs: [] },
      }),
    event: (event) => {
      if (event.type === "text") {
        if (event.logprobs !== undefined) {
          all.push(...event.logprobs);
          pending.push(...event.logprobs);
        }
        if (event.text === "") return "";
        text += event.text;
        return write("response.output_text.delta", {
          ...at,
          delta: event.text,
          logprobs: take(),
        });
      }
      if (event.type !== "done") return "";
      const response = ended(base, event, (status) => [
        messageItem(itemId, status, text, withLogprobs ? all : undefined),
      ]);
      const item = response.output[0] as z.infer<typeof OutputMessage>;
      return (
        write("response.output_text.done", { ...at, text, logprobs: take() }) +
        write("response.content_part.done", { ...at, part: item.content[0] }) +
        write("response.output_item.done", { output_index: 0, item }) +
        write(response.status === "incomplete" ? "response.incomplete" : "response.completed", {
          response,
        })
      );
    },
    ...responsesEnd(write, base, () => [
      messageItem(itemId, "incomplete", text, withLogprobs ? all : undefined),
    ]),
  });
}

/**
 * A Response with tools in use: function_call items (one per call) and, with "auto", a message
 * item for the text before them. Streamed as OpenAI streams them: per call
 * response.output_item.added (its call_id and name), then response.function_call_arguments.delta
 * as the arguments are written, and response.function_call_arguments.done and
 * response.output_item.done when the next item starts or generation ends; a message's text as
 * a plain Response streams it.
 */
export async function toolsResponse(
  base: Base,
  started: Started,
  mode: ToolMode,
  stream: boolean,
): Promise<Response> {
  if (!stream) {
    const { text, done } = await collect(started);
    const items = new OutputItems(toolReader(mode, callId));
    items.read(text);
    items.read(undefined);
    return Response.json(ended(base, done, (status) => items.output(status)));
  }
  const write = eventWriter();
  const items = new OutputItems(toolReader(mode, callId), write);
  return sseResponse(started, {
    opening: () =>
      write("response.created", { response: inProgress(base) }) +
      write("response.in_progress", { response: inProgress(base) }),
    event: (event) => {
      if (event.type === "text") return items.read(event.text);
      if (event.type !== "done") return "";
      const held = items.read(undefined);
      const response = ended(base, event, (status) => items.output(status));
      const status = response.status === "incomplete" ? "incomplete" : "completed";
      return (
        held +
        items.close(status) +
        write(status === "incomplete" ? "response.incomplete" : "response.completed", { response })
      );
    },
    ...responsesEnd(write, base, () => items.output("incomplete")),
  });
}
