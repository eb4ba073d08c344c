// Messages as the template sees them: content given as a list of text parts is flattened the way
// vLLM does for string-format templates.
import type { TemplateValue } from "./chat-template-environment";
import { JsonNumber } from "./chat-template-json";

type Message = { readonly [key: string]: TemplateValue };

function isRecord(value: TemplateValue): value is Message {
  return (
    typeof value === "object" &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof JsonNumber)
  );
}

/** The text of a content given as parts; non-text parts contribute nothing. */
export function flattenContent(content: TemplateValue): TemplateValue {
  if (!Array.isArray(content)) return content;
  const texts: string[] = [];
  for (const part of content) {
    if (isRecord(part) && part.type === "text" && typeof part.text === "string")
      texts.push(part.text);
  }
  return texts.join("\n");
}

/** Each message with its content flattened. */
export function normalizeMessages(messages: readonly TemplateValue[]): TemplateValue[] {
  return messages.map((message) =>
    isRecord(message) && Array.isArray(message.content)
      ? { ...message, content: flattenContent(message.content) }
      : message,
  );
}

/** Every string anywhere in a value (to check what untrusted input spells). */
export function* stringsIn(value: TemplateValue): Generator<string> {
  if (typeof value === "string") yield value;
  else if (Array.isArray(value)) for (const item of value) yield* stringsIn(item);
  else if (typeof value === "object" && value !== null && isRecord(value)) {
    for (const [key, item] of Object.entries(value)) {
      yield key;
      yield* stringsIn(item);
    }
  }
}
