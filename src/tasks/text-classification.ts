// Text classification: tokenize at the edge → one run of the model → softmax and top-k.
import { ServiceError } from "../errors/service-error";
import type { TextClassificationManifest } from "../models/manifest";
import type { RegisteredModel } from "./registered-model";
import { encodeBatch } from "../tokenizers/batch";
import type { TextTokenizer } from "../tokenizers/tokenizer";
import { rows, softmax, topK, type LabelScore } from "./postprocess";
import { tensorGraph } from "./tensor-graph";
import { modelTokenizer } from "./model-tokenizer";

export interface Classification {
  labels: LabelScore[];
  tokens: number;
  truncated: boolean;
}

export interface ClassificationResult {
  results: Classification[];
  timings: { tokenizeMs: number; inferMs: number; postprocessMs: number };
}

export interface TextClassifier {
  readonly manifest: TextClassificationManifest;
  load(): Promise<void>;
  /** `fieldOf` names a text's request field in errors (routes shape requests differently). */
  classify(
    texts: readonly string[],
    k: number,
    fieldOf: (index: number) => string,
    signal?: AbortSignal,
  ): Promise<ClassificationResult>;
}

/** Builds the classifier for one model; the tokenizer is loaded once, with the session. */
export function createTextClassifier(
  model: RegisteredModel & { manifest: TextClassificationManifest },
): TextClassifier {
  const { manifest, runtime } = model;
  const getTokenizer = (): Promise<TextTokenizer> => modelTokenizer(model, manifest.tokenizer);
  const { graph, tensors } = tensorGraph(model);
  const [logitsSpec] = graph.outputs;
  if (logitsSpec === undefined) throw new Error(`Model ${manifest.name} declares no output`);

  return {
    manifest,
    async load() {
      await Promise.all([getTokenizer(), runtime.load()]);
    },
    async classify(texts, k, fieldOf, signal) {
      const [loadedTokenizer] = await Promise.all([getTokenizer(), runtime.load()]);
      const started = performance.now();
      const batch = encodeBatch(loadedTokenizer, texts, manifest.tokenizer);
      const empty = batch.tokenCounts.indexOf(0);
      if (empty !== -1) {
        throw new ServiceError(422, "unprocessable_input", "Text has no tokens to classify", {
          field: fieldOf(empty),
        });
      }
      const tokenized = performance.now();
      const { outputs, timings } = await tensors.run(
        {
          input_ids: { datatype: "INT64", shape: batch.shape, data: batch.inputIds },
          attention_mask: { datatype: "INT64", shape: batch.shape, data: batch.attentionMask },
        },
        { outputNames: [logitsSpec.name], signal },
      );
      const postStarted = performance.now();
      const logits = outputs[logitsSpec.name];
      if (logits === undefined || !isNumeric(logits.data)) {
        throw new ServiceError(
          502,
          "upstream_error",
          `Model ${manifest.name} returned no numeric ${logitsSpec.name}`,
        );
      }
      const results = rows(logits.data, manifest.labels.length).map((row, i) => ({
        labels: topK(softmax(row), manifest.labels, k),
        tokens: batch.tokenCounts[i] ?? 0,
        truncated: batch.truncated[i] ?? false,
      }));
      return {
        results,
        timings: {
          tokenizeMs: tokenized - started,
          inferMs: timings.runMs,
          postprocessMs: performance.now() - postStarted,
        },
      };
    },
  };
}

function isNumeric(data: unknown): data is ArrayLike<number> {
  return data instanceof Float32Array || data instanceof Float64Array;
}
