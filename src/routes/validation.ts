// zod failures → 400 problem naming the first failing field (and listing all of them).
import type { Hook } from "@hono/zod-openapi";
import type { z } from "zod";
import { ServiceError } from "../errors/service-error";
import type { AppEnv } from "./services";

/** The deepest path an issue points at: for a union, the branch that got furthest. */
function deepestPath(issue: z.core.$ZodIssue): PropertyKey[] {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue.path;
  const branches = issue.errors.flat().map((inner) => [...issue.path, ...deepestPath(inner)]);
  return branches.reduce(
    (deepest, path) => (path.length > deepest.length ? path : deepest),
    issue.path,
  );
}

function fieldOf(issue: z.core.$ZodIssue, target: string): string {
  // An unknown field is named itself, so "logprobs: true"-style refusals and typos read the same.
  const keys = issue.code === "unrecognized_keys" ? issue.keys.slice(0, 1) : [];
  const path = [...deepestPath(issue), ...keys].map(String).join(".");
  return path === "" ? target : path;
}

/** A 400 problem naming the first failing field and listing every issue. */
export function invalidRequest(
  error: z.ZodError,
  target: string,
  prefix: readonly string[] = [],
): ServiceError {
  const errors = error.issues.map((issue) => ({
    field: fieldOf({ ...issue, path: [...prefix, ...issue.path] }, target),
    detail: issue.message,
  }));
  const [first] = errors;
  return new ServiceError(
    400,
    "invalid_request",
    first === undefined ? "Invalid request" : `${first.field}: ${first.detail}`,
    {
      field: first?.field ?? target,
      errors,
    },
  );
}

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
    return await request.json();
  } catch (error) {
    throw new ServiceError(400, "invalid_json", "The request body is not valid JSON", {
      field: "body",
      cause: error,
    });
  }
}
