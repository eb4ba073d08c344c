// The floor under the edge's figures (scripts/bench-llm.mjs): a Worker that only relays the
// origin's vLLM SSE stream, with no tokenizer, task or framing of ours.
// POST /native relays the body through workerd's own pump (no JS per chunk);
// POST /js reads each chunk in JS and enqueues it into a new ReadableStream, as any Worker
// that rewrites a stream must;
// POST /first is /js that answers only once the origin's first chunk is read — as the edge
// does, so that a refusal before the first token is an HTTP status and not a half-sent
// stream: the floor of a Worker whose response starts at the first token rather than at the
// origin's headers. Request: the vLLM completions body, forwarded as is.
// The ways a Worker can write a stream it produces chunk by chunk, each reading the origin in
// JS the same way (scripts/llm/compare-relay-writes.mjs measures them side by side):
// POST /its: a push loop, not awaited by the handler, `await writer.write(chunk)` into
// workerd's native IdentityTransformStream, whose readable side is the response;
// POST /its-hwm: the same with a 64 KiB highWaterMark (a write resolves once buffered, not
// once the pump has taken it);
// POST /ts: the same loop into a standard (JS) TransformStream;
// POST /js-start: a push loop that enqueues into a ReadableStream from `start` (no pull calls,
// no backpressure: the origin's pace bounds it);
// POST /js-bytes: /js with a byte stream (`type: "bytes"`);
// POST /edge-like: /js with the edge's kind of per-token JS but none of its code (below);
// POST /pipe-ts: no reader of ours: the origin's body piped through a JS TransformStream whose
// transform() enqueues each chunk.
export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    const upstream = await fetch(`${env.ORIGIN_URL}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: await request.text(),
    });
    const headers = { "content-type": "text/event-stream", "content-encoding": "identity" };
    if (pathname === "/native") return new Response(upstream.body, { headers });
    if (pathname === "/pipe-ts") {
      // The read side in workerd's pipe: a JS TransformStream whose transform() sees each chunk.
      return new Response(
        upstream.body.pipeThrough(
          new TransformStream({ transform: (chunk, controller) => controller.enqueue(chunk) }),
        ),
        { headers },
      );
    }
    const reader = upstream.body.getReader();
    if (pathname === "/its" || pathname === "/its-hwm" || pathname === "/ts") {
      const { readable, writable } =
        pathname === "/ts"
          ? new TransformStream()
          : new IdentityTransformStream(
              pathname === "/its-hwm" ? { highWaterMark: 65536 } : undefined,
            );
      const writer = writable.getWriter();
      const pump = async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return writer.close();
          await writer.write(value);
        }
      };
      pump().catch((error) => {
        void reader.cancel(error).catch(() => undefined);
        void writer.abort(error).catch(() => undefined);
      });
      return new Response(readable, { headers });
    }
    if (pathname === "/edge-like") {
      // The edge's per-token JS without its code: decode, split the SSE events, JSON.parse each,
      // a runtime generator under a task generator, one OpenAI-shaped frame stringified and
      // encoded per read, enqueued from pull — to tell the edge's own work from its isolate's.
      const decoder = new TextDecoder();
      const encoder = new TextEncoder();
      async function* steps() {
        let buffered = "";
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          buffered += decoder.decode(value, { stream: true });
          const events = buffered.split("\n\n");
          buffered = events.pop() ?? "";
          const ids = [];
          for (const event of events) {
            const data = event.slice(6);
            if (data === "[DONE]") continue;
            const choice = JSON.parse(data).choices?.[0];
            if (choice?.token_ids) ids.push(...choice.token_ids);
          }
          yield ids;
        }
      }
      async function* texts() {
        for await (const ids of steps())
          yield ids.map((id) => String.fromCharCode(97 + (id % 26))).join("");
      }
      const events = texts();
      const body = new ReadableStream({
        async pull(controller) {
          const next = await events.next();
          if (next.done) return controller.close();
          const chunk = {
            id: "cmpl-0",
            object: "text_completion",
            created: 0,
            model: "tiny-llm",
            choices: [{ index: 0, text: next.value, logprobs: null, finish_reason: null }],
          };
          controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { headers });
    }
    if (pathname === "/js-start") {
      const body = new ReadableStream({
        start(controller) {
          void (async () => {
            for (;;) {
              const { done, value } = await reader.read();
              if (done) return controller.close();
              controller.enqueue(value);
            }
          })().catch((error) => controller.error(error));
        },
        cancel: (reason) => reader.cancel(reason),
      });
      return new Response(body, { headers });
    }
    let first = pathname === "/first" ? await reader.read() : undefined;
    const body = new ReadableStream({
      ...(pathname === "/js-bytes" ? { type: "bytes" } : {}),
      async pull(controller) {
        const { done, value } = first ?? (await reader.read());
        first = undefined;
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: (reason) => reader.cancel(reason),
    });
    return new Response(body, { headers });
  },
};
