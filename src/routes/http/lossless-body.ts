// A request body read again with its numbers as written (1.0 stays 1.0), for what a chat
// template prints: tool schemas, template variables. The validated body stays the source of
// truth for everything else; Hono keeps the raw text, so this reads no second copy off the wire.
import { JsonNumber, parseLosslessJson, type LosslessJson } from "../../tokenizers/chat-template";

export type LosslessObject = { [key: string]: LosslessJson };

export const isLosslessObject = (value: LosslessJson | undefined): value is LosslessObject =>
  typeof value === "object" &&
  value !== null &&
  !Array.isArray(value) &&
  !(value instanceof JsonNumber);

/** The body's top-level members, numbers kept as written (an already validated object). */
export async function losslessBody(request: { text(): Promise<string> }): Promise<LosslessObject> {
  const body = parseLosslessJson(await request.text());
  return isLosslessObject(body) ? body : {};
}
