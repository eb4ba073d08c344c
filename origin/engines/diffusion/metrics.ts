// The diffusion engine's Prometheus metrics: UNet runs and their rows (rows / runs = the mean
// batch), denoising steps per image (what a client that leaves stops), requests by outcome,
// and the requests in the loop now.
import { Counter, Gauge, Histogram, type Registry } from "../../../src/protocols/prometheus";

export type DiffusionMetrics = ReturnType<typeof createDiffusionMetrics>;

export function createDiffusionMetrics(
  registry: Registry,
  running: () => ReadonlyArray<{ model: string; value: number }>,
) {
  registry.add(
    new Gauge(
      "origin_diffusion_requests_running",
      "Diffusion requests in the denoising loop.",
      () => running().map(({ model, value }) => ({ labels: { model_name: model }, value })),
    ),
  );
  return {
    unetRuns: registry.add(
      new Counter(
        "origin_diffusion_unet_runs",
        "UNet runs (one per loop step, for every active request together).",
      ),
    ),
    unetRows: registry.add(
      new Counter(
        "origin_diffusion_unet_rows",
        "UNet rows run, summed over runs (2 per image: conditional and unconditional).",
      ),
    ),
    imageSteps: registry.add(
      new Counter("origin_diffusion_image_steps", "Denoising steps done, per image."),
    ),
    requests: registry.add(
      new Counter(
        "origin_diffusion_requests",
        "Diffusion requests ended, by outcome (finished, aborted, failed).",
      ),
    ),
    stepSeconds: registry.add(
      new Histogram(
        "origin_diffusion_step_seconds",
        "Time of one loop step (one UNet run for the whole batch).",
        [0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1],
      ),
    ),
  };
}
