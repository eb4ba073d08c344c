// zod failures → a 400 problem naming the first failing field (and listing all of them); shared
// by the routes and the protocol codecs, edge and origin alike.
import type { z } from "zod";
import { ServiceError } from "./service-error";

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
