// Every call the playground makes: same-origin fetches carrying the tab's API key, and API errors
// (RFC 9457 problem+json) turned into an ApiError that says the title, detail and field.
import { readKey } from "./key";

/** An answer other than 2xx, as the service's problem+json describes it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly detail: string,
    readonly field: string | undefined,
  ) {
    super(`${title}: ${detail}`);
    this.name = "ApiError";
  }
}

/** Fired when the service answers 401: the key box asks for a key. */
export const KEY_REQUIRED = "playground:key-required";

/** Fired after each answer's headers arrive: `detail` is {@link RequestFigure}. */
export const REQUEST_DONE = "playground:request-done";

export interface RequestFigure {
  path: string;
  status: number;
  /** From the call to the answer's headers (the first event, for a stream). */
  milliseconds: number;
}

function headersFor(init: RequestInit | undefined): Headers {
  const headers = new Headers(init?.headers);
  const key = readKey();
  if (key !== "") headers.set("authorization", `Bearer ${key}`);
  return headers;
}

function stringMember(body: unknown, name: string): string | undefined {
  if (typeof body !== "object" || body === null || !(name in body)) return undefined;
  const value: unknown = Reflect.get(body, name);
  return typeof value === "string" ? value : undefined;
}

async function toApiError(response: Response): Promise<ApiError> {
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (response.status === 401) document.dispatchEvent(new Event(KEY_REQUIRED));
  return new ApiError(
    response.status,
    stringMember(body, "title") ?? `HTTP ${response.status}`,
    stringMember(body, "detail") ?? text.slice(0, 300),
    stringMember(body, "field"),
  );
}

/** A same-origin request (relative paths only); throws ApiError on a non-2xx answer. */
export async function call(path: string, init?: RequestInit): Promise<Response> {
  if (!path.startsWith("/")) throw new Error(`not a same-origin path: ${path}`);
  const started = performance.now();
  const response = await fetch(path, { ...init, headers: headersFor(init), credentials: "omit" });
  const figure: RequestFigure = {
    path,
    status: response.status,
    milliseconds: performance.now() - started,
  };
  document.dispatchEvent(new CustomEvent(REQUEST_DONE, { detail: figure }));
  if (!response.ok) throw await toApiError(response);
  return response;
}

/** POSTs JSON and reads the JSON answer. */
export async function postJson(path: string, body: unknown, signal?: AbortSignal) {
  const response = await call(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    ...(signal === undefined ? {} : { signal }),
  });
  return (await response.json()) as unknown;
}
