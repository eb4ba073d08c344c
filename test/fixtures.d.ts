// Reference outputs saved by the training scripts; tests validate them with zod.
declare module "*/reference.json" {
  const value: unknown;
  export default value;
}
declare module "*/windows.json" {
  const value: unknown;
  export default value;
}
