// The floor under the edge's figures (scripts/bench-llm.mjs): a Worker that only relays the
// origin's vLLM SSE stream, with no tokenizer, task or framing of ours.
// POST /native relays the body through workerd's own pump (no JS per chunk);
// POST /js reads each chunk in JS and enqueues it into a new ReadableStream, as any Worker
// that rewrites a stream must;
// POST /first is /js that answers only once the origin's first chunk is read — as the edge
// does, so that a refusal before the first token is an HTTP status and not a half-sent
// stream: the floor of a Worker whose response starts at the first token rather than at the
// origin's headers. Request: the vLLM completions body, forwarded as is.
export default {
  async fetch(request, env) {
    const { pathname } = new URL(request.url);
    const upstream = await fetch(`${env.ORIGIN_URL}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: await request.text() });
    const headers = { "content-type": "text/event-stream", "content-encoding": "identity" };
    if (pathname === "/native") return new Response(upstream.body, { headers });
    const reader = upstream.body.getReader();
    let first = pathname === "/first" ? await reader.read() : undefined;
    const body = new ReadableStream({
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
