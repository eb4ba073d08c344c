// The zod schemas of the OIP v2 routes: model and server metadata, readiness, and the path
// parameters of a model with or without its version.
import { z } from "@hono/zod-openapi";

const TensorMetadata = z.object({
  name: z.string(),
  datatype: z.string(),
  shape: z.array(z.number()),
});
export const ModelMetadata = z
  .object({
    name: z.string(),
    versions: z.array(z.string()),
    platform: z.string(),
    inputs: z.array(TensorMetadata),
    outputs: z.array(TensorMetadata),
  })
  .openapi("ModelMetadata");
export const Readiness = z
  .object({ name: z.string(), ready: z.boolean(), error: z.string().optional() })
  .openapi("ModelReady");
export const ServerReady = z
  .object({ ready: z.boolean(), error: z.string().optional() })
  .openapi("ServerReady");
export const ServerMetadata = z
  .object({ name: z.string(), version: z.string(), extensions: z.array(z.string()) })
  .openapi("ServerMetadata");

export const ModelParams = z.object({ name: z.string().min(1) });
export const VersionedParams = z.object({ name: z.string().min(1), version: z.string().min(1) });
