// Reference outputs saved by the training scripts; tests validate them with zod.
declare module "*/reference.json" {
  const value: unknown;
  export default value;
}
declare module "*/windows.json" {
  const value: unknown;
  export default value;
}
// The Open Inference Protocol REST specification (kserve/open-inference-protocol) as JSON.
declare module "*/open_inference_rest.json" {
  const value: unknown;
  export default value;
}
// Requests captured from Triton's Python client (scripts/oip/capture-tritonclient.py).
declare module "*.request.json" {
  const value: unknown;
  export default value;
}
// Providers' own sample payloads (test/fixtures/providers/SOURCES.md says where each is from).
declare module "*/stripe-fixtures3.json" {
  const value: unknown;
  export default value;
}
declare module "*/stripe-outcomes.json" {
  const value: unknown;
  export default value;
}
declare module "*/adyen-authorisationTrue.json" {
  const value: unknown;
  export default value;
}
declare module "*/adyen-captureFalse.json" {
  const value: unknown;
  export default value;
}
declare module "*/tokenizer_config.json" {
  const value: { chat_template?: unknown };
  export default value;
}
// Held-out digits and onnxruntime-node's INT8 outputs (scripts/digits/evaluate.mjs).
declare module "*/held-out.json" {
  const value: unknown;
  export default value;
}
