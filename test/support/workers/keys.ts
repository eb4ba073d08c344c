// Issues stored API keys through the admin API (as the bootstrap admin key), for tests of
// scopes, limits and the audit trail.
import { SELF } from "cloudflare:test";
import { BASE, KEY } from "./helpers";

export interface Issued {
  id: string;
  key: string;
  name: string;
  scopes: string[];
  limits: Record<string, number>;
}

let issued = 0;

export async function issueKey(
  scopes: readonly string[],
  limits: Record<string, number> = {},
): Promise<Issued> {
  issued += 1;
  const response = await SELF.fetch(`${BASE}/admin/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${KEY}`, "content-type": "application/json" },
    body: JSON.stringify({ name: `test-${issued}-${scopes.join("+")}`, scopes, limits }),
  });
  if (response.status !== 201)
    throw new Error(`issuing a key: ${response.status} ${await response.text()}`);
  return response.json<Issued>();
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

export interface ActivityRow {
  at: string;
  method: string;
  route: string;
  model: string | null;
  status: number;
  prompt_tokens: number;
  completion_tokens: number;
  latency_ms: number;
}

/** A key's audit rows once `count` are there (they are written after the answers). */
export async function activityOf(keyId: string, count: number): Promise<ActivityRow[]> {
  let rows: ActivityRow[] = [];
  for (let i = 0; i < 100; i++) {
    const response = await SELF.fetch(`${BASE}/admin/keys/${keyId}/activity?limit=1000`, {
      headers: { authorization: `Bearer ${KEY}` },
    });
    rows = (await response.json<{ data: ActivityRow[] }>()).data;
    if (rows.length >= count) return rows;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return rows;
}
