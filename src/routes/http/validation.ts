// Request validation for the routes: zod failures thrown as one 400 problem (invalid-request.ts),
// and JSON bodies read without letting a parser exception escape.
import type { Hook } from "@hono/zod-openapi";
import type { z } from "zod";
import { invalidRequest } from "../../errors/invalid-request";
import { ServiceError } from "../../errors/service-error";
import { bodyText } from "./body";
import type { AppEnv } from "./services";

/** The defaultHook of every OpenAPI route: throw, so onError renders one problem shape. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  throw invalidRequest(result.error, result.target === "json" ? "body" : result.target);
};

/** Parses a body outside the OpenAPI routes, with the same 400 problem on failure. */
export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.output<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  throw invalidRequest(result.error, "body");
}

/** Reads a JSON body; malformed JSON is a 400, never an exception from the parser. */
export async function readJson(request: Request): Promise<unknown> {
  try {
    return JSON.parse(await bodyText(request));
  } catch (error) {
    throw new ServiceError(400, "invalid_json", "The request body is not valid JSON", {
      field: "body",
      cause: error,
    });
  }
}
