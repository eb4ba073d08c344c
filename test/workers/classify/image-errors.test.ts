// Every way an image request can be wrong gets a 4xx problem naming the field — never a 500,
// never an isolate out of memory: oversized bodies, decompression bombs, truncated or corrupt
// files, types that are not images, remote URLs, and a model that takes no images.
import { describe, expect, it } from "vitest";
import { chunk, ihdr, pngFile, zlib } from "../../support/png-craft";
import { post, problem } from "../../support/workers/helpers";
import {
  dataUrl,
  jpegOf,
  paperDigit,
  pngOf,
  postBytes,
  postForm,
} from "../../support/workers/image-classify";

const RAW = "/v1/classify?model=digit-classifier";

async function expectProblem(
  response: Response,
  status: number,
  code: string,
  field: string,
): Promise<string> {
  expect(response.status).toBe(status);
  const body = await problem(response);
  expect(body.code).toBe(code);
  expect(body.field).toBe(field);
  return body.detail;
}

describe("image input errors", () => {
  it(
    "refuses a small PNG declaring 50,000 x " + "50,000 pixels before inflating anything (413)",
    async () => {
      const bomb = pngFile(ihdr(50_000, 50_000), chunk("IDAT", await zlib(new Uint8Array(1000))));
      expect(bomb.length).toBeLessThan(200);
      const detail = await expectProblem(
        await postBytes(RAW, bomb, "image/png"),
        413,
        "payload_too_large",
        "body",
      );
      expect(detail).toMatch(/50000x50000/);
      await expectProblem(
        await post("/v1/classify", {
          model: "digit-classifier",
          input: [dataUrl("image/png", pngOf(1)), dataUrl("image/png", bomb)],
        }),
        413,
        "payload_too_large",
        "input.1",
      );
    },
  );

  it(
    "refuses IDAT data that inflates past what a " + "small header declares (a deflate bomb, 413)",
    async () => {
      // 64x64 gray needs 64 * 65 bytes; this stream inflates to 16 MiB from ~16 KiB.
      const bomb = pngFile(
        ihdr(64, 64),
        chunk("IDAT", await zlib(new Uint8Array(16 * 1024 * 1024))),
      );
      expect(bomb.length).toBeLessThan(40_000);
      await expectProblem(
        await postBytes(RAW, bomb, "image/png"),
        413,
        "payload_too_large",
        "body",
      );
    },
  );

  it("refuses a JPEG whose frame header declares more than the limit (413)", async () => {
    const { gray, width, height } = paperDigit(0);
    const jpeg = jpegOf(gray, width, height);
    // Rewrite the SOF0 frame's height and width to 50,000.
    const sof = jpeg.findIndex((byte, i) => byte === 0xff && jpeg[i + 1] === 0xc0);
    jpeg.set([0xc3, 0x50, 0xc3, 0x50], sof + 5);
    await expectProblem(await postBytes(RAW, jpeg, "image/jpeg"), 413, "payload_too_large", "body");
  });

  it("refuses truncated PNG and JPEG files (422 invalid_image)", async () => {
    const png = pngOf(3);
    await expectProblem(
      await postBytes(RAW, png.subarray(0, png.length - 30), "image/png"),
      422,
      "invalid_image",
      "body",
    );
    const { gray, width, height } = paperDigit(3);
    const jpeg = jpegOf(gray, width, height);
    await expectProblem(
      await postBytes(RAW, jpeg.subarray(0, Math.floor(jpeg.length / 2)), "image/jpeg"),
      422,
      "invalid_image",
      "body",
    );
    await expectProblem(
      await postBytes(RAW, jpeg.subarray(0, 40), "image/jpeg"),
      422,
      "invalid_image",
      "body",
    );
  });

  it("refuses corrupt image data and bytes that are not what their type says (422)", async () => {
    const broken = pngFile(
      ihdr(28, 28),
      chunk("IDAT", new Uint8Array([0x78, 0x9c, 1, 2, 3, 4, 5, 6, 7, 8])),
    );
    await expectProblem(await postBytes(RAW, broken, "image/png"), 422, "invalid_image", "body");
    await expectProblem(
      await postBytes(RAW, new TextEncoder().encode("not an image at all"), "image/png"),
      422,
      "invalid_image",
      "body",
    );
  });

  it(
    "refuses types that are not PNG or JPEG (415) and " +
      "bytes of no image format via Workers AI (415)",
    async () => {
      await expectProblem(
        await postBytes(RAW, new Uint8Array([0x47, 0x49, 0x46, 0x38]), "image/gif"),
        415,
        "unsupported_media_type",
        "headers.content-type",
      );
      await expectProblem(
        await post("/v1/classify", {
          model: "digit-classifier",
          input: "data:image/gif;base64,R0lGODlhAQABAAAAACw=",
        }),
        415,
        "unsupported_media_type",
        "input",
      );
      await expectProblem(
        await post("/v1/run/digit-classifier", { image: [0x47, 0x49, 0x46, 0x38, 0x39, 0x61] }),
        415,
        "unsupported_media_type",
        "image",
      );
      const form = new FormData();
      form.append("model", "digit-classifier");
      form.append("file", new File(["hello"], "notes.txt", { type: "text/plain" }));
      await expectProblem(
        await postForm("/v1/classify", form),
        415,
        "unsupported_media_type",
        "file",
      );
    },
  );

  it("refuses a body over MAX_BODY_BYTES (413)", async () => {
    const response = await postBytes(RAW, new Uint8Array(1_100_000), "image/png");
    expect(response.status).toBe(413);
    expect((await problem(response)).code).toBe("payload_too_large");
  });

  it("refuses remote image URLs: the edge fetches nothing for a caller (400)", async () => {
    const detail = await expectProblem(
      await post("/v1/classify", {
        model: "digit-classifier",
        input: "https://example.com/seven.png",
      }),
      400,
      "invalid_request",
      "input",
    );
    expect(detail).toMatch(/remote image URLs are not fetched/);
    await expectProblem(
      await post("/v1/classify", {
        model: "digit-classifier",
        image: ["http://example.com/a.png"],
      }),
      400,
      "invalid_request",
      "image.0",
    );
  });

  it("names what is missing or malformed (400)", async () => {
    await expectProblem(
      await postBytes("/v1/classify", pngOf(1), "image/png"),
      400,
      "invalid_request",
      "model",
    );
    await expectProblem(
      await postBytes(RAW, new Uint8Array(0), "image/png"),
      400,
      "invalid_request",
      "body",
    );
    await expectProblem(
      await post("/v1/classify", { model: "digit-classifier", input: "hello" }),
      400,
      "invalid_request",
      "input",
    );
    await expectProblem(
      await post("/v1/classify", { model: "digit-classifier", input: "data:image/png;base64,@@@" }),
      400,
      "invalid_request",
      "input",
    );
    await expectProblem(
      await post("/v1/run/digit-classifier", { image: [1, 2, 300] }),
      400,
      "invalid_request",
      "image.2",
    );
    const form = new FormData();
    form.append("model", "digit-classifier");
    await expectProblem(await postForm("/v1/classify", form), 400, "invalid_request", "file");
  });

  it("refuses images for a text model and texts for an image model (422)", async () => {
    await expectProblem(
      await post("/v1/classify", {
        model: "spam-classifier",
        image: dataUrl("image/png", pngOf(1)),
      }),
      422,
      "unprocessable_input",
      "model",
    );
    await expectProblem(
      await postBytes("/v1/classify?model=spam-classifier", pngOf(1), "image/png"),
      422,
      "unprocessable_input",
      "model",
    );
    await expectProblem(
      await post("/v1/run/spam-classifier", { image: Array.from(pngOf(1)) }),
      422,
      "unprocessable_input",
      "model",
    );
    await expectProblem(
      await post("/v1/run/digit-classifier", { text: "seven" }),
      422,
      "unprocessable_input",
      "model",
    );
  });

  it("refuses more images than MAX_BATCH (422)", async () => {
    const url = dataUrl("image/png", pngOf(1));
    await expectProblem(
      await post("/v1/classify", {
        model: "digit-classifier",
        input: Array.from({ length: 65 }, () => url),
      }),
      422,
      "unprocessable_input",
      "input",
    );
  });
});
