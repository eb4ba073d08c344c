#!/usr/bin/env node
// Operators' CLI for API keys, over the admin API (/admin/keys) with a key holding `admin`
// (on a fresh deployment, one of the API_KEYS secret's bootstrap keys).
//   BASE=https://… ADMIN_KEY=… node scripts/keys.mjs create --name chat --scope generate \
//     [--scope classify] [--rpm 60] [--tpm 20000] [--tpd 1000000] [--tpmonth 20000000]
//   node scripts/keys.mjs list | get <id> | rotate <id> | revoke <id>
//   node scripts/keys.mjs activity <id> | usage <id>   (the audit trail; <id> may be bootstrap-1)
import { parseArgs } from "node:util";

const USAGE =
  "usage: keys.mjs create --name NAME --scope SCOPE… [--rpm N] [--tpm N] [--tpd N] [--tpmonth N]\n" +
  "       keys.mjs list | get ID | rotate ID | revoke ID | activity ID | usage ID\n" +
  "env:   BASE (default http://127.0.0.1:8787), ADMIN_KEY (a key with the admin scope)";

const base = (process.env.BASE ?? "http://127.0.0.1:8787").replace(/\/$/, "");
const adminKey = process.env.ADMIN_KEY ?? process.env.KEY;

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: {
    name: { type: "string" },
    scope: { type: "string", multiple: true },
    rpm: { type: "string" },
    tpm: { type: "string" },
    tpd: { type: "string" },
    tpmonth: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
});

const [command, id] = positionals;
if (values.help || command === undefined) {
  console.log(USAGE);
  process.exit(command === undefined && !values.help ? 2 : 0);
}
if (adminKey === undefined) {
  console.error("Set ADMIN_KEY to a key with the admin scope.");
  process.exit(2);
}

function integer(flag, value) {
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number <= 0) {
    console.error(`--${flag} takes a positive integer, got ${value}`);
    process.exit(2);
  }
  return number;
}

function needId() {
  if (id === undefined) {
    console.error(`${command} needs a key id (key_…)\n${USAGE}`);
    process.exit(2);
  }
  return encodeURIComponent(id);
}

async function call(method, path, body) {
  const response = await fetch(`${base}/admin/keys${path}`, {
    method,
    headers: {
      authorization: `Bearer ${adminKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) {
    console.error(`${response.status}: ${text}`);
    process.exit(1);
  }
  return JSON.parse(text);
}

const limits = Object.fromEntries(
  [
    ["requests_per_minute", integer("rpm", values.rpm)],
    ["tokens_per_minute", integer("tpm", values.tpm)],
    ["tokens_per_day", integer("tpd", values.tpd)],
    ["tokens_per_month", integer("tpmonth", values.tpmonth)],
  ].filter(([, value]) => value !== undefined),
);

let result;
switch (command) {
  case "create":
    if (values.name === undefined || (values.scope ?? []).length === 0) {
      console.error(`create needs --name and at least one --scope\n${USAGE}`);
      process.exit(2);
    }
    result = await call("POST", "", { name: values.name, scopes: values.scope, limits });
    console.error("The key is shown this once; store it now.");
    break;
  case "list":
    result = await call("GET", "");
    break;
  case "get":
    result = await call("GET", `/${needId()}`);
    break;
  case "rotate":
    result = await call("POST", `/${needId()}/rotate`);
    console.error("The new key is shown this once; the old one no longer works.");
    break;
  case "revoke":
    result = await call("DELETE", `/${needId()}`);
    break;
  case "activity":
    result = await call("GET", `/${needId()}/activity`);
    break;
  case "usage":
    result = await call("GET", `/${needId()}/usage?days=30`);
    break;
  default:
    console.error(`unknown command ${command}\n${USAGE}`);
    process.exit(2);
}
console.log(JSON.stringify(result, null, 2));
