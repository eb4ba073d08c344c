// JSON.parse with a ceiling on nesting. V8's parser itself is iterative, but whatever walks
// the parsed value afterwards may recurse; a body nested thousands deep is refused here,
// in one linear pass, with the member that nests too deep named.
import { ServiceError } from "../errors/service-error";

/** Deeper than any OIP body needs (body → inputs → input → data with up to 8 dimensions). */
export const MAX_JSON_DEPTH = 32;

interface Frame {
  kind: "object" | "array";
  key: string;
  index: number;
}

function pathOf(frames: readonly Frame[]): string {
  const segments = frames
    .slice(0, -1)
    .map((frame) => (frame.kind === "array" ? String(frame.index) : frame.key));
  // The member whose value nests too deep: `inputs.0.data`, not `inputs.0.data.0.0.0…`.
  while (segments.length > 0 && /^\d+$/.test(segments[segments.length - 1]!)) segments.pop();
  return segments.join(".") || "body";
}

function checkDepth(text: string, maxDepth: number): void {
  const frames: Frame[] = [];
  let keyStart = 0;
  let keyEnd = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text.charCodeAt(i);
    if (char === 0x22 /* " */) {
      keyStart = i;
      for (i++; i < text.length; i++) {
        const inner = text.charCodeAt(i);
        if (inner === 0x5c /* \ */) i++;
        else if (inner === 0x22) break;
      }
      keyEnd = i + 1;
    } else if (char === 0x3a /* : */) {
      const top = frames[frames.length - 1];
      if (top?.kind === "object") {
        try {
          top.key = String(JSON.parse(text.slice(keyStart, keyEnd)));
        } catch {
          return; // malformed: JSON.parse reports it
        }
      }
    } else if (char === 0x2c /* , */) {
      const top = frames[frames.length - 1];
      if (top?.kind === "array") top.index++;
    } else if (char === 0x5b /* [ */ || char === 0x7b /* { */) {
      frames.push({ kind: char === 0x5b ? "array" : "object", key: "", index: 0 });
      if (frames.length > maxDepth) {
        const field = pathOf(frames);
        throw new ServiceError(
          400,
          "invalid_request",
          `${field}: nested more than ${maxDepth} levels deep`,
          { field },
        );
      }
    } else if (char === 0x5d /* ] */ || char === 0x7d /* } */) {
      frames.pop();
    }
  }
}

/** Parses JSON text; malformed or too deeply nested text is a 400 naming the field. */
export function parseBoundedJson(text: string, maxDepth = MAX_JSON_DEPTH): unknown {
  checkDepth(text, maxDepth);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new ServiceError(
      400,
      "invalid_json",
      "The request body is not valid JSON: " +
        `${error instanceof Error ? error.message : String(error)}`,
      {
        field: "body",
        cause: error,
      },
    );
  }
}
