// The diffusion engine: one shared denoising loop that packs every active request's rows into each
// UNet run.
import { ServiceError } from "../../../src/errors/service-error";
import {
  createDenoiser,
  encodePrompts,
  reportsStep,
  sizeOf,
  unetStep,
  unscale,
  type BatchItem,
  type DiffusionGraphs,
  type DiffusionRequest,
  type DiffusionSpec,
  type DiffusionStep,
} from "../../../src/generation/diffusion";
import type { DiffusionMetrics } from "./metrics";
import { EventQueue } from "./queue";

interface Job {
  items: BatchItem[];
  request: DiffusionRequest;
  steps: number;
  done: number;
  events: EventQueue<DiffusionStep>;
  signal: AbortSignal;
}

export interface DiffusionLimits {
  /** Most UNet rows per run (2 per image); images beyond wait for the next step. */
  maxRows: number;
  /** Most requests in the loop; beyond, 429. */
  maxRequests: number;
}

/**
 * The origin's diffusion engine: requests join a shared loop; every loop step packs the
 * rows of every active request — whatever step each is at (the timestep is per row) —
 * into one UNet run, then each request's denoisers step and its reported latents are
 * pushed to its stream; a finished request is decoded by the VAE and leaves. A request
 * whose client left (its signal) is dropped before the next step: no more UNet rows run
 * for it.
 */
export class DiffusionEngine {
  private jobs: Job[] = [];
  private looping = false;
  private readonly latentSize: number;

  constructor(
    readonly modelName: string,
    private readonly graphs: DiffusionGraphs,
    private readonly spec: DiffusionSpec,
    private readonly limits: DiffusionLimits,
    private readonly metrics: DiffusionMetrics,
  ) {
    this.latentSize = sizeOf(spec.latentShape);
  }

  get runningCount(): number {
    return this.jobs.length;
  }

  /** Encodes the prompts (a failure here is the request's HTTP status), then joins the loop. */
  async submit(
    request: DiffusionRequest,
    signal: AbortSignal,
  ): Promise<AsyncIterable<DiffusionStep>> {
    if (this.jobs.length >= this.limits.maxRequests) {
      throw new ServiceError(
        429,
        "rate_limited",
        `The diffusion engine is running ${this.jobs.length} requests; retry shortly`,
        { headers: { "retry-after": "1" } },
      );
    }
    if (request.n * 2 > this.limits.maxRows)
      throw new ServiceError(
        400,
        "invalid_request",
        `At most ${Math.floor(this.limits.maxRows / 2)} images per request`,
        { field: "inputs.noise.shape" },
      );
    const { cond, uncond } = await encodePrompts(
      this.graphs,
      this.spec,
      request.inputIds,
      request.n,
    );
    const items = cond.map((embeds, i) => ({
      denoiser: createDenoiser(
        this.spec.scheduler,
        request.params,
        request.noise.subarray(i * this.latentSize, (i + 1) * this.latentSize),
      ),
      cond: embeds,
      uncond,
    }));
    const job: Job = {
      items,
      request,
      steps: request.params.steps,
      done: 0,
      events: new EventQueue(),
      signal,
    };
    this.jobs.push(job);
    if (!this.looping) void this.loop();
    return job.events;
  }

  private finish(job: Job, outcome: "finished" | "aborted" | "failed", error?: unknown): void {
    this.jobs = this.jobs.filter((other) => other !== job);
    this.metrics.requests.inc({ model_name: this.modelName, outcome });
    job.events.close(error);
  }

  /** The jobs of the next step: in arrival order, whole requests, up to maxRows rows. */
  private batch(): Job[] {
    const chosen: Job[] = [];
    let rows = 0;
    for (const job of this.jobs) {
      if (rows + job.items.length * 2 > this.limits.maxRows) continue;
      chosen.push(job);
      rows += job.items.length * 2;
    }
    return chosen;
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      while (this.jobs.length > 0) {
        for (const job of this.jobs.filter((candidate) => candidate.signal.aborted))
          this.finish(job, "aborted");
        const batch = this.batch();
        if (batch.length === 0) continue;
        await this.step(batch);
        // Rotate: requests left out of a full batch go first next time.
        this.jobs = [
          ...this.jobs.filter((job) => !batch.includes(job)),
          ...this.jobs.filter((job) => batch.includes(job)),
        ];
        // Let new requests and disconnects in between steps.
        await new Promise((resolve) => setImmediate(resolve));
      }
    } finally {
      this.looping = false;
    }
  }

  private async step(batch: Job[]): Promise<void> {
    const items = batch.flatMap((job) => job.items);
    const labels = { model_name: this.modelName };
    const started = performance.now();
    let predicted: Float32Array[];
    try {
      predicted = await unetStep(
        items,
        this.latentSize,
        items[0]?.uncond.length ?? 0,
        this.graphs.unet,
      );
    } catch (error) {
      for (const job of batch) this.finish(job, "failed", error);
      return;
    }
    this.metrics.stepSeconds.observe(labels, (performance.now() - started) / 1000);
    this.metrics.unetRuns.inc(labels);
    this.metrics.unetRows.inc(labels, items.length * 2);
    this.metrics.imageSteps.inc(labels, items.length);
    let offset = 0;
    for (const job of batch) {
      const latents = predicted.slice(offset, offset + job.items.length);
      offset += job.items.length;
      job.done += 1;
      if (job.signal.aborted) {
        this.finish(job, "aborted");
        continue;
      }
      if (reportsStep(job.done, job.steps, job.request.previewEvery)) {
        const data = new Float32Array(latents.length * this.latentSize);
        latents.forEach((latent, i) => data.set(latent, i * this.latentSize));
        job.events.push({
          step: job.done,
          final: false,
          outputs: {
            latent: { datatype: "FP32", shape: [job.items.length, ...this.spec.latentShape], data },
          },
        });
      }
      if (job.done >= job.steps) await this.decode(job);
    }
  }

  private async decode(job: Job): Promise<void> {
    try {
      const latents = new Float32Array(job.items.length * this.latentSize);
      job.items.forEach((item, i) => latents.set(item.denoiser.sample(), i * this.latentSize));
      const image = await this.graphs.decode(
        unscale(latents, this.spec.scalingFactor),
        job.items.length,
      );
      job.events.push({
        step: job.steps,
        final: true,
        outputs: {
          image: {
            datatype: "FP32",
            shape: [job.items.length, ...this.spec.imageShape],
            data: image,
          },
        },
      });
      this.finish(job, "finished");
    } catch (error) {
      this.finish(job, "failed", error);
    }
  }
}
