// bodyText reads a request body as workerd's own Request.text() does (UTF-8, a leading BOM
// dropped, no body is ""), through a Response that holds only the stream; readJson parses it with
// the same 400 on malformed JSON. Run in workerd, on its Request and Response.
import { describe, expect, it } from "vitest";
import { bodyText } from "../../../src/routes/http/body";
import { readJson } from "../../../src/routes/http/validation";
import { ServiceError } from "../../../src/errors/service-error";

const post = (body: BodyInit | null) =>
  new Request("https://edge.test/v1/webhooks/stripe", { method: "POST", body });

describe("bodyText", () => {
  it("reads what Request.text() reads", async () => {
    const bodies: (BodyInit | null)[] = [
      '{"id":"evt_1","amount":4200}',
      "héllo, 世界 🃏",
      new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d]), // a BOM, then {}
      new Uint8Array([0xff, 0x61]), // invalid UTF-8: a replacement character, then "a"
      "",
      null,
    ];
    for (const body of bodies) {
      const copy = body instanceof Uint8Array ? body.slice() : body;
      expect(await bodyText(post(body))).toBe(await post(copy).text());
    }
    expect(await bodyText(post(new Uint8Array([0xef, 0xbb, 0xbf, 0x7b, 0x7d])))).toBe("{}");
  });

  it("reads a streamed body, chunk by chunk", async () => {
    const chunks = ['{"a":', '"é', '"}'].map((part) => new TextEncoder().encode(part));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = chunks.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(next);
      },
    });
    expect(await bodyText(post(stream))).toBe('{"a":"é"}');
  });

  it("refuses a body already read, as Request.text() does", async () => {
    const request = post("once");
    expect(await request.text()).toBe("once");
    await expect(Promise.resolve().then(() => bodyText(request))).rejects.toThrow(TypeError);
  });
});

describe("readJson", () => {
  it("parses the body and answers malformed JSON with a 400 naming the body", async () => {
    expect(await readJson(post('{"inputs":["a"]}'))).toEqual({ inputs: ["a"] });
    const error = await readJson(post('{"inputs":')).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ServiceError);
    expect((error as ServiceError).status).toBe(400);
    expect((error as ServiceError).code).toBe("invalid_json");
    expect((error as ServiceError).field).toBe("body");
  });
});
