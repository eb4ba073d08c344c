// The only module that imports onnxruntime-web. workerd forbids compiling WASM from bytes,
// so the ORT binary arrives as a WebAssembly.Module imported from the bundle and is handed
// to ORT's Emscripten loader through a marker buffer (see instantiateImportedModule).
import * as ort from "onnxruntime-web/wasm";
import ortWasm from "onnxruntime-web/ort-wasm-simd-threaded.wasm";
// A small graph (scripts/ort/starter-graph.py) created and run once while the isolate starts.
import starterGraph from "./starter.onnx";
import { keep } from "../../memos";

export { ort };

const backend = keep("ort.backend", {
  /** ORT's linear memory, found when its instance is created (for the memory figures). */
  memory: undefined as WebAssembly.Memory | undefined,
  /** Set while the backend starts and once it has; a failure unsets it. */
  ready: undefined as Promise<void> | undefined,
  /** Model sessions created (the starter graph's not counted). */
  sessions: 0,
});

/** Bytes of linear memory ORT's WASM instance holds in this isolate (0 before ORT starts). */
export function wasmMemoryBytes(): number {
  return backend.memory?.buffer.byteLength ?? 0;
}

/** Emscripten either exports its memory or imports one it created (threaded builds). */
function findMemory(
  instance: WebAssembly.Instance,
  imports: WebAssembly.Imports | undefined,
): WebAssembly.Memory | undefined {
  const candidates = [
    ...Object.values(instance.exports),
    ...Object.values(imports ?? {}).flatMap((module) => Object.values(module)),
  ];
  return candidates.find(
    (value): value is WebAssembly.Memory => value instanceof WebAssembly.Memory,
  );
}

/** Bytes ORT receives as `wasmBinary`; never compiled, only recognised below. */
const MARKER = new TextEncoder().encode("edge-inference:ort-wasm-module");

function isMarker(source: unknown): boolean {
  if (!ArrayBuffer.isView(source) && !(source instanceof ArrayBuffer)) return false;
  const bytes = ArrayBuffer.isView(source)
    ? new Uint8Array(source.buffer, source.byteOffset, source.byteLength)
    : new Uint8Array(source);
  return bytes.length === MARKER.length && bytes.every((byte, i) => byte === MARKER[i]);
}

/**
 * Emscripten calls `WebAssembly.instantiate(wasmBinary, imports)`. While ORT initialises,
 * that call is redirected: the marker instantiates the pre-compiled module instead.
 */
async function withImportedModule<T>(init: () => Promise<T>): Promise<T> {
  const original = WebAssembly.instantiate;
  const redirected = async (source: unknown, imports?: WebAssembly.Imports) => {
    if (isMarker(source)) {
      const instance = await original(ortWasm, imports);
      backend.memory = findMemory(instance, imports);
      return { instance, module: ortWasm };
    }
    return original(source as BufferSource, imports);
  };
  // The overloads of WebAssembly.instantiate cannot be restated for a wrapper; the wrapper
  // keeps both call shapes' results.
  WebAssembly.instantiate = redirected as typeof WebAssembly.instantiate;
  try {
    return await init();
  } finally {
    WebAssembly.instantiate = original;
  }
}

/** Graphs optimized at build time skip ORT's optimizer here (a cold-start cost: the
 * transformers' passes and the lazy compilation of their WASM code); others get "all". */
function sessionOptions(preOptimized: boolean): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: ["wasm"],
    graphOptimizationLevel: preOptimized ? "disabled" : "all",
  };
}

/**
 * Initialises ORT's WASM backend once (single thread: Workers have no SharedArrayBuffer
 * workers): instantiating the module, ORT's own initialisation (operator schemas, the CPU
 * kernel registry), then creating and running the starter graph, which compiles the WASM
 * code of session creation, of a run and of common kernels, so that a model's first
 * session and run later cost little more than its own graph. A failure is not kept: the
 * next caller tries again.
 */
function startBackend(): Promise<void> {
  if (backend.ready === undefined) {
    ort.env.wasm.numThreads = 1;
    ort.env.wasm.proxy = false;
    ort.env.wasm.wasmBinary = MARKER;
    ort.env.logLevel = "error";
    const initialised = withImportedModule(() =>
      ort.InferenceSession.create(new Uint8Array(starterGraph), sessionOptions(true)),
    ).then(async (session) => {
      await session.run({ ids: new ort.Tensor("int64", new BigInt64Array(4), [1, 4]) });
      await session.release();
    });
    backend.ready = initialised;
    initialised.catch(() => {
      if (backend.ready === initialised) backend.ready = undefined;
    });
  }
  return backend.ready;
}

// ORT starts while the isolate starts, not in its first request: Workers evaluate a script's top
// level (and the microtasks it queues) before the first request reaches it — during the TLS
// handshake in production — so ORT's initialisation hides there. It counts against the startup
// limit (1 s of CPU since Cloudflare's 2025-10-10 changelog): `npm run bench` prints workerd's CPU
// until ready beside the first request. Should it fail here, the first createSession starts it
// again.
startBackend().catch(() => undefined);

/** How many model sessions this isolate has created (for /metrics: a preloaded model's
 * first request creates none). */
export function wasmSessionsCreated(): number {
  return backend.sessions;
}

/** Creates an ORT session from model bytes, once ORT's backend is ready. */
export async function createSession(
  model: Uint8Array,
  options: { preOptimized: boolean } = { preOptimized: false },
): Promise<ort.InferenceSession> {
  await startBackend();
  const session = await ort.InferenceSession.create(model, sessionOptions(options.preOptimized));
  backend.sessions += 1;
  return session;
}
