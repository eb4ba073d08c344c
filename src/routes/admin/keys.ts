// /admin/keys: operators create, list, rotate and revoke API keys (scope `admin`). A key's
// secret is in the answer to its creation or rotation only.
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import { ServiceError } from "../../errors/service-error";
import { keyAdmin } from "../../tasks/keys/key-admin";
import { requireScope } from "../http/auth";
import { limitBody, requireJson } from "../http/body";
import { BODY_ERRORS, KEY_ERRORS, problemResponses } from "../http/problems";
import type { AppEnv } from "../http/services";
import { validationHook } from "../http/validation";
import { keyActivityRoutes } from "./key-activity";
import { CreateKeyRequest, IssuedKeyView, KeyIdParams, KeyView, keyView } from "./key-schemas";

const AUTH_ERRORS = [...KEY_ERRORS, 503] as const;
const json = <T extends z.ZodType>(schema: T, description: string) => ({
  description,
  content: { "application/json": { schema } },
});

const createKeyRoute = createRoute({
  method: "post",
  path: "/",
  operationId: "createApiKey",
  summary: "Create an API key with scopes and limits (its secret is shown once)",
  request: {
    body: { required: true, content: { "application/json": { schema: CreateKeyRequest } } },
  },
  responses: {
    201: json(IssuedKeyView, "The key, with its secret"),
    ...problemResponses("problem", AUTH_ERRORS, BODY_ERRORS),
  },
});

const listKeysRoute = createRoute({
  method: "get",
  path: "/",
  operationId: "listApiKeys",
  summary: "Every API key (revoked ones included), without secrets",
  responses: {
    200: json(z.object({ data: z.array(KeyView) }).openapi("ApiKeyList"), "The keys"),
    ...problemResponses("problem", AUTH_ERRORS),
  },
});

const getKeyRoute = createRoute({
  method: "get",
  path: "/{id}",
  operationId: "getApiKey",
  summary: "One API key, without its secret",
  request: { params: KeyIdParams },
  responses: {
    200: json(KeyView, "The key"),
    ...problemResponses("problem", 400, 404, AUTH_ERRORS),
  },
});

const rotateKeyRoute = createRoute({
  method: "post",
  path: "/{id}/rotate",
  operationId: "rotateApiKey",
  summary: "A new secret for a live key (same id, scopes and limits); the old one stops working",
  request: { params: KeyIdParams },
  responses: {
    200: json(IssuedKeyView, "The key, with its new secret"),
    ...problemResponses("problem", 400, 404, AUTH_ERRORS),
  },
});

const revokeKeyRoute = createRoute({
  method: "delete",
  path: "/{id}",
  operationId: "revokeApiKey",
  summary: "Revoke an API key (kept, with its revocation time, for the audit trail)",
  request: { params: KeyIdParams },
  responses: {
    200: json(KeyView, "The revoked key"),
    ...problemResponses("problem", 400, 404, AUTH_ERRORS),
  },
});

const noSuchKey = (id: string) =>
  new ServiceError(404, "not_found", `No API key "${id}"`, { field: "id" });

export const keyRoutes = new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
keyRoutes.use(requireScope("admin"));
keyRoutes.on("POST", "/", requireJson, limitBody);

keyRoutes.openapi(createKeyRoute, async (c) => {
  const body = c.req.valid("json");
  const { record, secret } = await keyAdmin(c.env.DB).create(body);
  return c.json({ ...keyView(record), key: secret }, 201);
});

keyRoutes.openapi(listKeysRoute, async (c) => {
  const keys = await keyAdmin(c.env.DB).list();
  return c.json({ data: keys.map(keyView) }, 200);
});

keyRoutes.openapi(getKeyRoute, async (c) => {
  const { id } = c.req.valid("param");
  const record = await keyAdmin(c.env.DB).get(id);
  if (record === undefined) throw noSuchKey(id);
  return c.json(keyView(record), 200);
});

keyRoutes.openapi(rotateKeyRoute, async (c) => {
  const { id } = c.req.valid("param");
  const issued = await keyAdmin(c.env.DB).rotate(id);
  if (issued === undefined)
    throw new ServiceError(404, "not_found", `No live API key "${id}"`, { field: "id" });
  return c.json({ ...keyView(issued.record), key: issued.secret }, 200);
});

keyRoutes.openapi(revokeKeyRoute, async (c) => {
  const { id } = c.req.valid("param");
  const record = await keyAdmin(c.env.DB).revoke(id);
  if (record === undefined) throw noSuchKey(id);
  return c.json(keyView(record), 200);
});

// A key's audit trail and daily usage (key-activity.ts), behind the same admin scope.
keyRoutes.route("/", keyActivityRoutes);
