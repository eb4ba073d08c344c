// The layers of docs/architecture.md as rules: no import cycles, and no import that points up
// (route → task → runtime → models → codecs and kernels), in src/ or origin/. Every layer may
// make its memos through src/memos, which imports nothing.
const below = (layer, ...allowed) => ({
  name: `${layer}-imports-down`,
  comment: `src/${layer} imports only the layers below it`,
  severity: "error",
  from: { path: `^src/${layer}/` },
  to: {
    path: "^src/",
    pathNot: [`^src/${layer}/`, ...[...allowed, "memos"].map((name) => `^src/${name}/`)],
  },
});

const KERNELS = ["generation", "tensors", "errors"];
const CODECS = ["protocols", "tokenizers", "images", ...KERNELS];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      from: { path: "^(src|origin)/" },
      to: { circular: true },
    },
    below("routes", "tasks", "models", "runtime", ...CODECS),
    below("tasks", "models", "runtime", ...CODECS),
    below("runtime", "models", ...CODECS),
    below("models", ...CODECS),
    below("protocols", ...KERNELS),
    below("tokenizers", ...KERNELS),
    below("images", ...KERNELS),
    below("generation", "tensors", "errors"),
    below("tensors"),
    below("errors"),
    below("memos"),
    {
      name: "origin-shares-only-kernels",
      comment: "the origin reaches the edge only through modules meant to be shared",
      severity: "error",
      from: { path: "^origin/" },
      to: {
        path: "^src/",
        pathNot: [
          "^src/(generation|tensors|errors|protocols|tokenizers|memos)/",
          "^src/models/manifest\\.ts$",
        ],
      },
    },
    {
      name: "nothing-imports-the-top",
      comment: "the entry, the app and the composition root are imported by no layer",
      severity: "error",
      from: {
        path: "^(src/(routes|tasks|runtime|models|protocols|tokenizers|images|generation|tensors|errors|memos)|origin)/",
      },
      to: { path: "^src/(index|app|compose|isolate)\\.ts$" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    // The origin's build output (gitignored) is not source.
    exclude: { path: "^origin/dist/" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: { extensions: [".ts", ".mts", ".js", ".mjs"] },
  },
};
