// zod failures → 400 problem naming the first failing field (and listing all of them).
import type { Hook } from "@hono/zod-openapi";
import type { z } from "zod";
import { ServiceError } from "../errors/service-error";
import type { AppEnv } from "./services";

/** The deepest path an issue points at: for a union, the branch that got furthest. */
function deepestPath(issue: z.core.$ZodIssue): PropertyKey[] {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue.path;
  const branches = issue.errors.flat().map((inner) => [...issue.path, ...deepestPath(inner)]);
  return branches.reduce((deepest, path) => (path.length > deepest.length ? path : deepest), issue.path);
}

function fieldOf(issue: z.core.$ZodIssue, target: string): string {
  const path = deepestPath(issue).map(String).join(".");
  return path === "" ? target : path;
}

/** The defaultHook of every OpenAPI route: throw, so onError renders one problem shape. */
export const validationHook: Hook<unknown, AppEnv, string, unknown> = (result) => {
  if (result.success) return;
  const target = result.target === "json" ? "body" : result.target;
  const errors = result.error.issues.map((issue) => ({ field: fieldOf(issue, target), detail: issue.message }));
  const [first] = errors;
  throw new ServiceError(400, "invalid_request", first === undefined ? "Invalid request" : `${first.field}: ${first.detail}`, {
    field: first?.field ?? target,
    errors,
  });
};
