// The schedulers on offer, by name (scheduler.ts holds their contract).
import { createDdim } from "./ddim";
import { createEuler } from "./euler";
import type { Scheduler, SchedulerName } from "./scheduler";
import type { ScheduleConfig } from "./schedule";

export function createScheduler(
  name: SchedulerName,
  config: ScheduleConfig,
  steps: number,
): Scheduler {
  if (!Number.isInteger(steps) || steps < 1 || steps > config.numTrainTimesteps)
    throw new RangeError(`steps must be an integer in 1..${config.numTrainTimesteps}`);
  switch (name) {
    case "ddim":
      return createDdim(config, steps);
    case "euler":
      return createEuler(config, steps);
    default: {
      const unknown: never = name;
      throw new Error(`unknown scheduler ${String(unknown)}`);
    }
  }
}
