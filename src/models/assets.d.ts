// Manifests imported from models/ are typed unknown: zod validates them when the registry
// is built. (tokenizer.json and tokenizer.bin are bytes through wrangler's Data rule;
// `wrangler types` types them.)
declare module "*/manifest.json" {
  const value: unknown;
  export default value;
}
declare module "*/drift-reference.json" {
  const value: unknown;
  export default value;
}
