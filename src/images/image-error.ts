// What can be wrong with an image's bytes, independent of HTTP: the task layer maps each
// kind to a status (too_large → 413, unsupported → 415, corrupt → 422) and names the field.

export type ImageErrorKind = "too_large" | "unsupported" | "corrupt";

export class ImageError extends Error {
  readonly kind: ImageErrorKind;

  constructor(kind: ImageErrorKind, message: string, options: { cause?: unknown } = {}) {
    super(message, { cause: options.cause });
    this.name = "ImageError";
    this.kind = kind;
  }
}
