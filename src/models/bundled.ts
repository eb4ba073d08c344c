// Models shipped inside the Worker bundle. Add a model: import its manifest and the files
// it needs at the edge; leave `files` out to have it read from the MODELS R2 bucket.
import type { ModelEntry } from "./registry";
import digitManifest from "../../models/digit-classifier/manifest.json";
import digitModel from "../../models/digit-classifier/model.int8.onnx";
import fraudManifest from "../../models/fraud-gru/manifest.json";
import fraudModel from "../../models/fraud-gru/model.int8.opt.onnx";
import fraudAttribution from "../../models/fraud-gru/attribution.onnx";
import spamManifest from "../../models/spam-classifier/manifest.json";
import spamModel from "../../models/spam-classifier/model.int8.opt.onnx";
import spamTokenizer from "../../models/spam-classifier/tokenizer.bin";
import tinyLlmManifest from "../../models/tiny-llm/manifest.json";
import tinyLlmTokenizer from "../../models/tiny-llm/tokenizer.bin";
import digitDiffusionManifest from "../../models/digit-diffusion/manifest.json";
import digitDiffusionTokenizer from "../../models/digit-diffusion/tokenizer.json";

export const bundledModels: readonly ModelEntry[] = [
  {
    manifest: spamManifest,
    files: { "model.int8.opt.onnx": spamModel, "tokenizer.bin": spamTokenizer },
  },
  {
    manifest: fraudManifest,
    files: {
      "model.int8.opt.onnx": fraudModel,
      // The attribution batch's graph, cut at the scored step.
      "attribution.onnx": fraudAttribution,
    },
  },
  { manifest: digitManifest, files: { "model.int8.onnx": digitModel } },
  // Generation runs on the origin: only the tokenizer (and chat template) ships to the edge.
  { manifest: tinyLlmManifest, files: { "tokenizer.bin": tinyLlmTokenizer } },
  // The diffusion loop runs on the origin: the edge tokenizes prompts, draws noise, makes previews
  // and PNGs.
  { manifest: digitDiffusionManifest, files: { "tokenizer.json": digitDiffusionTokenizer } },
];
