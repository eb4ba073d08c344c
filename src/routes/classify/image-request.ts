// The images of a classify request and the fields that name them, read from whichever body
// it sent: a raw PNG/JPEG body, a multipart file part, or data URLs in JSON.
import type { z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import type { EncodedImage } from "../../tasks/image-classification";
import { parseBody } from "../http/validation";
import { dataUrlBytes, fileBytes, mediaEssence } from "./image-input";
import { ClassifyForm, type ClassifyQuery, type ClassifyRequest } from "./schemas";

export function asList(value: string | string[]): string[] {
  return Array.isArray(value) ? value : [value];
}

/** Images to classify and the names of their fields, from whichever body the request sent. */
export interface ImageRequest {
  model: string;
  modelField: string;
  topK: number | undefined;
  images: EncodedImage[];
  fieldOf: (index: number) => string;
}

export async function rawImageRequest(
  request: Request,
  query: z.infer<typeof ClassifyQuery>,
): Promise<ImageRequest> {
  if (query.model === undefined) {
    throw new ServiceError(
      400,
      "invalid_request",
      "model: a raw image body names its model in the query (?model=…)",
      { field: "model" },
    );
  }
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length === 0)
    throw new ServiceError(400, "invalid_request", "body: the image body is empty", {
      field: "body",
    });
  return {
    model: query.model,
    modelField: "model",
    topK: query.top_k,
    images: [{ bytes, declaredImage: true }],
    fieldOf: () => "body",
  };
}

export async function readForm(request: Request): Promise<z.infer<typeof ClassifyForm>> {
  let form: FormData;
  try {
    form = await request.formData();
  } catch (error) {
    throw new ServiceError(400, "invalid_request", "body: not a valid multipart/form-data body", {
      field: "body",
      cause: error,
    });
  }
  const fields: Record<string, File | string> = {};
  for (const [name, value] of form.entries()) {
    if (name in fields)
      throw new ServiceError(400, "invalid_request", `${name}: sent more than once`, {
        field: name,
      });
    fields[name] = value;
  }
  return parseBody(ClassifyForm, fields);
}

export async function formImageRequest(form: z.infer<typeof ClassifyForm>): Promise<ImageRequest> {
  const field = form.file !== undefined ? "file" : "image";
  const file = form.file ?? form.image;
  if (file === undefined || (form.file !== undefined && form.image !== undefined)) {
    throw new ServiceError(
      400,
      "invalid_request",
      "file: send the image as exactly one file part named file (or image)",
      { field: "file" },
    );
  }
  const bytes = await fileBytes(file, field);
  return {
    model: form.model,
    modelField: "model",
    topK: form.top_k,
    images: [{ bytes, declaredImage: mediaEssence(file.type).startsWith("image/") }],
    fieldOf: () => field,
  };
}

export function jsonImages(body: z.infer<typeof ClassifyRequest>): {
  images: EncodedImage[];
  fieldOf: (index: number) => string;
} {
  const field = body.image !== undefined ? "image" : "input";
  const value = body.image ?? body.input;
  if (value === undefined || (body.image !== undefined && body.input !== undefined)) {
    throw new ServiceError(
      400,
      "invalid_request",
      "input: send the images as input (or image), one of the two",
      { field: "input" },
    );
  }
  const fieldOf = (index: number) => (Array.isArray(value) ? `${field}.${index}` : field);
  return {
    images: asList(value).map((url, i) => ({
      bytes: dataUrlBytes(url, fieldOf(i)),
      declaredImage: true,
    })),
    fieldOf,
  };
}
