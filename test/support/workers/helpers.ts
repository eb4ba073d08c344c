// Shared request helpers for tests that run inside workerd.
import { SELF } from "cloudflare:test";

export const KEY = "test-key-1";
export const BASE = "https://edge.test";

export function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

export function get(
  path: string,
  headers: Record<string, string> = { authorization: `Bearer ${KEY}` },
): Promise<Response> {
  return SELF.fetch(`${BASE}${path}`, { headers });
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  field?: string;
  /** OIP's string on /v2, OpenAI's object on /v1 (src/routes/http/problems.ts). */
  error?: unknown;
  errors?: { field: string; detail: string }[];
}

/** Reads a problem+json answer, failing loudly if the response is anything else. */
export async function problem(response: Response): Promise<Problem> {
  const type = response.headers.get("content-type");
  if (type !== "application/problem+json")
    throw new Error(`expected problem+json, got ${type}: ${await response.text()}`);
  return response.json<Problem>();
}
