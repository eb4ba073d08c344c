// Moved to src/tensors/tensor.ts (a neutral home for models/, protocols/ and runtime/); this
// re-export keeps branches written before the move compiling. Import the new path.
export * from "../tensors/tensor";
