// Checks a Response against the OpenAPI document the Worker serves: the operation exists
// (or the answer is the 404 problem of an unknown route), the status is documented, the
// content type is one documented for it, and the body matches that schema (ajv, JSON
// Schema 2020-12 as OpenAPI 3.1 uses it). Also the error rules every answer follows.
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import { expect } from "vitest";
import { z } from "zod";
import { ERROR_CODES } from "../../../src/errors/service-error";
import { errorDialect } from "../../../src/routes/http/problems";

interface MediaType {
  schema?: unknown;
}
interface Operation {
  responses: Record<string, { content?: Record<string, MediaType> }>;
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
}

const DOCUMENT_ID = "https://edge.test/openapi.json";

const escapePointer = (segment: string) =>
  encodeURIComponent(segment.replaceAll("~", "~0").replaceAll("/", "~1"));

/** A path template as a regular expression; templates with fewer parameters win. */
function templates(document: OpenApiDocument) {
  return Object.keys(document.paths)
    .map((template) => ({
      template,
      params: (template.match(/\{/g) ?? []).length,
      pattern: new RegExp(
        `^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{[^}]+\}/g, "[^/]+")}$`,
      ),
    }))
    .sort((a, b) => a.params - b.params);
}

export interface Checked {
  status: number;
  contentType: string;
  body: unknown;
}

export class Conformance {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: ReturnType<typeof templates>;

  constructor(private readonly document: OpenApiDocument) {
    this.ajv.addSchema({ ...document, $id: DOCUMENT_ID });
    this.routes = templates(document);
  }

  /** The documented path template a concrete path falls under, if any. */
  templateOf(path: string): string | undefined {
    // A trailing slash is the same resource where a route answers both (GET /v2/ as /v2).
    const trimmed = path.length > 1 ? path.replace(/\/$/, "") : path;
    return (
      this.routes.find((route) => route.pattern.test(path))?.template ??
      this.routes.find((route) => route.pattern.test(trimmed))?.template
    );
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `${DOCUMENT_ID}#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }

  /** Asserts that the answer is documented and matches its schema; returns what it read. */
  async check(method: string, url: string, response: Response, context: string): Promise<Checked> {
    const path = new URL(url).pathname;
    const text = await response.text();
    const contentType = (response.headers.get("content-type") ?? "").split(";")[0]!.trim();
    const body: unknown = /json/.test(contentType) ? JSON.parse(text) : text;
    const where =
      `${context}: ${method} ${path} → ${response.status} ` +
      `${contentType} ${text.slice(0, 300)}`;

    expect(response.status, where).not.toBe(500);
    const template = this.templateOf(path);
    const operation =
      template === undefined ? undefined : this.document.paths[template]?.[method.toLowerCase()];
    // Every error is a problem, except answers documented with a body of their own (readiness
    // 503s).
    const ownBody =
      operation?.responses[String(response.status)]?.content?.["application/json"] !== undefined;
    if (response.status >= 400 && !ownBody)
      checkProblem(path, response.status, contentType, body, where);

    // A path that only a trailing slash kept from its route, answered by the app's own 404:
    // the route does not answer both, so it is an unknown path (GET /admin/keys/).
    const slashOnly =
      template !== undefined &&
      !this.routes.some((route) => route.template === template && route.pattern.test(path));
    const unknownRoute =
      slashOnly && response.status === 404 && (body as { title?: string })?.title === "Not found";
    if (template === undefined || operation === undefined || unknownRoute) {
      // No such operation: the app's 404 problem (unknown path, or a known path's other method),
      // unless a guard of its prefix answered first (auth on /v1/*, the JSON body guards).
      expect([401, 404, 413, 415], where).toContain(response.status);
      return { status: response.status, contentType, body };
    }
    const documented = operation.responses[String(response.status)];
    expect(documented, `${where}: status not documented`).toBeDefined();
    const media = documented?.content?.[contentType];
    expect(
      media,
      `${where}: content type not documented ` +
        `(${Object.keys(documented?.content ?? {}).join(", ")})`,
    ).toBeDefined();
    if (media?.schema !== undefined) {
      const pointer = [
        "paths",
        template,
        method.toLowerCase(),
        "responses",
        String(response.status),
        "content",
        contentType,
        "schema",
      ]
        .map(escapePointer)
        .join("/");
      const validate = this.validator(`/${pointer}`);
      const valid = validate(body);
      expect(valid, `${where}: ${this.ajv.errorsText(validate.errors)}`).toBe(true);
    }
    return { status: response.status, contentType, body };
  }
}

const ProblemBody = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number(),
    detail: z.string(),
    instance: z.string(),
    code: z.enum(ERROR_CODES),
    field: z.string().optional(),
    error: z.unknown().optional(),
  })
  .loose();

/** Every error: problem+json with a known code, its status, and the members its dialect adds. */
function checkProblem(
  path: string,
  status: number,
  contentType: string,
  body: unknown,
  where: string,
): void {
  expect(contentType, where).toBe("application/problem+json");
  const parsed = ProblemBody.safeParse(body);
  expect(parsed.error?.message, where).toBeUndefined();
  if (!parsed.success) return;
  const problem = parsed.data;
  expect(problem.status, where).toBe(status);
  const dialect = errorDialect(path);
  if (dialect === "oip") expect(problem.error, where).toBe(problem.detail);
  if (dialect === "openai") {
    expect(problem.error, where).toEqual({
      message: problem.detail,
      code: problem.code,
      param: problem.field ?? null,
      type: expect.any(String),
    });
  }
  if (dialect === "problem") expect(problem.error, where).toBeUndefined();
}
