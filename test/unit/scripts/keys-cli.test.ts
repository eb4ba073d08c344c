// scripts/keys.mjs against a loopback stand-in for the admin API: each command sends the request
// the admin routes take (method, path, body, the admin key) and prints the answer; a refusal
// exits non-zero with the problem.
import { execFile } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const run = promisify(execFile);

interface Seen {
  method: string | undefined;
  url: string | undefined;
  authorization: string | undefined;
  body: string;
}

const seen: Seen[] = [];
const server = createServer(async (request: IncomingMessage, response) => {
  let body = "";
  for await (const chunk of request) body += chunk;
  seen.push({
    method: request.method,
    url: request.url,
    authorization: request.headers.authorization,
    body,
  });
  if (request.url?.includes("key_forbidden")) {
    response.writeHead(403, { "content-type": "application/problem+json" });
    response.end('{"code":"insufficient_scope"}');
    return;
  }
  response.writeHead(request.method === "POST" && request.url === "/admin/keys" ? 201 : 200, {
    "content-type": "application/json",
  });
  response.end(JSON.stringify({ id: "key_0123456789abcdef", key: "ei_secret" }));
});
let base = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => server.close());

const cli = (...args: string[]) =>
  run(process.execPath, ["scripts/keys.mjs", ...args], {
    env: { ...process.env, BASE: base, ADMIN_KEY: "admin-key" },
  });

describe("scripts/keys.mjs", () => {
  it("creates a key with scopes and limits, and prints the once-shown secret", async () => {
    const { stdout, stderr } = await cli(
      "create",
      "--name",
      "chat",
      "--scope",
      "generate",
      "--scope",
      "classify",
      "--rpm",
      "60",
      "--tpd",
      "100000",
    );
    expect(seen.at(-1)).toEqual({
      method: "POST",
      url: "/admin/keys",
      authorization: "Bearer admin-key",
      body: JSON.stringify({
        name: "chat",
        scopes: ["generate", "classify"],
        limits: { requests_per_minute: 60, tokens_per_day: 100000 },
      }),
    });
    expect(JSON.parse(stdout)).toMatchObject({ key: "ei_secret" });
    expect(stderr).toContain("shown this once");
  });

  it("lists, rotates, revokes and reads a key's activity and usage", async () => {
    for (const args of [
      ["list"],
      ["rotate", "key_0123456789abcdef"],
      ["revoke", "key_0123456789abcdef"],
      ["activity", "bootstrap-1"],
      ["usage", "key_0123456789abcdef"],
    ])
      await cli(...args);
    expect(seen.slice(-5).map((each) => `${each.method} ${each.url}`)).toEqual([
      "GET /admin/keys",
      "POST /admin/keys/key_0123456789abcdef/rotate",
      "DELETE /admin/keys/key_0123456789abcdef",
      "GET /admin/keys/bootstrap-1/activity",
      "GET /admin/keys/key_0123456789abcdef/usage?days=30",
    ]);
  });

  it("exits non-zero with the problem when refused, and on a bad limit", async () => {
    await expect(cli("revoke", "key_forbidden")).rejects.toMatchObject({
      code: 1,
      stderr: expect.stringContaining("403"),
    });
    await expect(
      cli("create", "--name", "x", "--scope", "generate", "--rpm", "0"),
    ).rejects.toMatchObject({
      code: 2,
    });
  });
});
