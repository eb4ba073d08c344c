// GET /docs: the API reference, openapi.json rendered by Swagger UI (@hono/swagger-ui). Public,
// like the document itself. The page loads Swagger UI's script and styles from its CDN (jsDelivr).
import { swaggerUI } from "@hono/swagger-ui";
import { Hono } from "hono";
import { OPENAPI_PATH } from "./openapi";
import type { AppEnv } from "../http/services";

export const REFERENCE_PATH = "/docs";

export const referenceRoutes = new Hono<AppEnv>().get(
  REFERENCE_PATH,
  swaggerUI({ url: OPENAPI_PATH, title: "Edge inference service: API reference" }),
);
