// Dynamic batching in the isolate, as Triton's dynamic batcher does it on a server: calls that
// arrive together run as one batch, so a model's fixed cost per run (in onnxruntime-web, a few
// microseconds for each node of the graph) is paid once for all of them. "Together" is one turn
// of the isolate's event loop: a call waits until the events already waiting have run (other
// requests reaching the same model), never for a clock. Alone, a call runs on the next turn.
//
// The callers may be different Durable Objects of one isolate, and workerd forbids one object to
// settle another's promise ("Cannot perform I/O on behalf of a different Durable Object"). So no
// caller settles another's: the first caller whose turn comes runs the batch and writes each
// output beside its call (plain data), and every caller reads its own on its own timer; should that
// first caller be cancelled mid-run, the others run their calls alone after `lostAfterMs`.
import { memoMap } from "../memos";

/** Runs and calls per batcher, for /metrics (calls ÷ runs is the mean batch). */
const counts = memoMap<string, { runs: number; calls: number }>("runtime.batches");

/** Every batcher's runs and calls in this isolate so far. */
export function batchCounts(): [name: string, counts: { runs: number; calls: number }][] {
  return [...counts];
}

export interface DynamicBatcherOptions {
  /** Its name on /metrics (batchers of one name are counted together). */
  name: string;
  /** A batch runs as soon as it holds this many calls (Triton's `max_batch_size`). */
  maxBatch: number;
  /**
   * A batch not answered this long after it began is taken as lost (the request that ran it was
   * cancelled between its steps) and each of its calls runs alone. Default 1000 ms; a run takes a
   * few milliseconds.
   */
  lostAfterMs?: number;
}

interface Waiting<I, O> {
  item: I;
  state: "queued" | "running" | "done" | "failed";
  /** When its batch began (Date.now()), once it is running. */
  since?: number;
  /** Set with `done`. */
  output?: O;
  /** Set with `failed`. */
  error?: unknown;
}

/** Where a call stands (a function, so each await reads it afresh). */
const stateOf = (waiting: Waiting<unknown, unknown>) => waiting.state;

/** The next turn of the event loop, on the caller's own timer; rejects if `signal` aborts first. */
function nextTurn(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal === undefined) {
      setTimeout(resolve, 0);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, 0);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * `run(items)` answers a batch, one output per item in order. Each call is answered from its own
 * batch's run; a failed run fails every call of that batch. A call whose signal aborts before its
 * batch has run is rejected with the signal's reason (and left out of the batch if that has not
 * begun); once its batch has run, it is answered.
 */
export function dynamicBatcher<I, O>(
  run: (items: readonly I[]) => Promise<readonly O[]>,
  { name, maxBatch, lostAfterMs = 1000 }: DynamicBatcherOptions,
): (item: I, signal?: AbortSignal) => Promise<O> {
  let queue: Waiting<I, O>[] = [];

  /** Runs `batch` (default: what is queued), writing each call's output (or the error) beside it. */
  const runQueued = async (batch = queue.splice(0)): Promise<void> => {
    const since = Date.now();
    for (const waiting of batch) {
      waiting.state = "running";
      waiting.since = since;
    }
    const counted = counts.get(name) ?? { runs: 0, calls: 0 };
    counted.runs++;
    counted.calls += batch.length;
    counts.set(name, counted);
    try {
      const outputs = await run(batch.map((waiting) => waiting.item));
      if (outputs.length !== batch.length)
        throw new Error(`a batch of ${batch.length} got ${outputs.length} outputs`);
      batch.forEach((waiting, i) => {
        waiting.output = outputs[i];
        waiting.state = "done";
      });
    } catch (error) {
      for (const waiting of batch) {
        waiting.error = error;
        waiting.state = "failed";
      }
    }
  };

  return async (item, signal) => {
    signal?.throwIfAborted();
    const waiting: Waiting<I, O> = { item, state: "queued" };
    queue.push(waiting);
    if (queue.length >= maxBatch) await runQueued();
    for (;;) {
      if (stateOf(waiting) === "done") return waiting.output as O;
      if (stateOf(waiting) === "failed") throw waiting.error;
      try {
        await nextTurn(stateOf(waiting) === "queued" ? signal : undefined);
      } catch (reason) {
        // The signal aborted while it waited: answered if its batch has run, else it leaves.
        if (stateOf(waiting) === "done") return waiting.output as O;
        queue = queue.filter((other) => other !== waiting);
        throw reason;
      }
      // This call's turn came before its batch ran: it runs the batch, for every call in it.
      if (stateOf(waiting) === "queued") await runQueued();
      else if (stateOf(waiting) === "running" && Date.now() - waiting.since! > lostAfterMs)
        await runQueued([waiting]);
    }
  };
}
