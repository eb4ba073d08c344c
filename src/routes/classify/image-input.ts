// Where an image comes from in a request, turned into its bytes: a base64 data URL in JSON,
// a multipart file part, a raw image body, or Workers AI's array of byte values. The edge
// fetches nothing on a caller's behalf, so a remote URL is refused with a 400.
import { z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { integerList } from "../http/integer-list";

/** Media types the image routes take (the decoder also checks the bytes' own signature). */
export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg"] as const;

/** A data URL or plain string in JSON: bounded by MAX_BODY_BYTES before it gets here. */
export const DataUrl = z.string().min(1, "must not be empty").max(4_000_000).openapi({
  description: "An image as a data URL: data:image/png;base64,… or data:image/jpeg;base64,…",
  example: "data:image/png;base64,iVBORw0KGgo…",
});

export const ImageBytes = integerList(0, 255).min(1, "needs the image's bytes").openapi({
  description:
    "The image file's bytes (PNG or JPEG) as numbers 0–255, as Workers AI's image models take them",
});

export const ImageFile = z
  .instanceof(File, { message: "must be a file part" })
  .openapi({ type: "string", format: "binary", description: "A PNG or JPEG file" });

function isImageType(type: string): boolean {
  return (IMAGE_MEDIA_TYPES as readonly string[]).includes(type);
}

/** The media type's essence, lower-cased ("image/png; x=y" → "image/png"). */
export function mediaEssence(type: string): string {
  return type.split(";")[0]!.trim().toLowerCase();
}

function base64Bytes(text: string, field: string): Uint8Array {
  try {
    return Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
  } catch (error) {
    throw new ServiceError(
      400,
      "invalid_request",
      `${field}: the data URL's payload is not valid base64`,
      { field, cause: error },
    );
  }
}

/** Bytes of an image given as a data URL; remote URLs and other media types are refused. */
export function dataUrlBytes(value: string, field: string): Uint8Array {
  if (/^https?:\/\//i.test(value)) {
    throw new ServiceError(
      400,
      "invalid_request",
      `${field}: remote image URLs are not fetched; send the ` +
        "image itself (a data: URL, multipart, or the raw bytes)",
      { field },
    );
  }
  const match = /^data:([^;,]*)((?:;[^;,]*)*),/i.exec(value);
  if (match === null) {
    throw new ServiceError(
      400,
      "invalid_request",
      `${field}: expected a data:image/png;base64,… or data:image/jpeg;base64,… URL`,
      { field },
    );
  }
  const type = mediaEssence(match[1] ?? "");
  if (!isImageType(type)) {
    throw new ServiceError(
      415,
      "unsupported_media_type",
      `${field}: ${type || "text/plain"} is not a supported ` +
        `image type (${IMAGE_MEDIA_TYPES.join(", ")})`,
      { field },
    );
  }
  if (!/;base64$/i.test(match[2] ?? "")) {
    throw new ServiceError(
      400,
      "invalid_request",
      `${field}: the data URL must be base64-encoded (;base64,)`,
      { field },
    );
  }
  return base64Bytes(value.slice(match[0].length).replace(/\s+/g, ""), field);
}

/**
 * Bytes of a multipart file part whose type is an image type (or unset / octet-stream: the bytes
 * decide).
 */
export async function fileBytes(file: File, field: string): Promise<Uint8Array> {
  const type = mediaEssence(file.type);
  if (type !== "" && type !== "application/octet-stream" && !isImageType(type)) {
    throw new ServiceError(
      415,
      "unsupported_media_type",
      `${field}: ${type} is not a supported image type (${IMAGE_MEDIA_TYPES.join(", ")})`,
      { field },
    );
  }
  return new Uint8Array(await file.arrayBuffer());
}
