// ORCA's endpoint-load-metrics header as the origin writes it and the edge reads it
// (src/protocols/endpoint-load-metrics.ts): both gauges or nothing, never a guess.
import { describe, expect, it } from "vitest";
import {
  formatEndpointLoad,
  parseEndpointLoad,
} from "../../../src/protocols/endpoint-load-metrics";

describe("endpoint-load-metrics", () => {
  it("reads back what it writes, and other members beside them", () => {
    const value = formatEndpointLoad({ running: 3, waiting: 7 });
    expect(value).toBe(
      "TEXT named_metrics.num_requests_running=3, named_metrics.num_requests_waiting=7",
    );
    expect(parseEndpointLoad(value)).toEqual({ running: 3, waiting: 7 });
    expect(
      parseEndpointLoad(
        "TEXT cpu_utilization=0.3, named_metrics.num_requests_waiting=0, " +
          "named_metrics.num_requests_running=12",
      ),
    ).toEqual({ running: 12, waiting: 0 });
  });

  it.each([
    null,
    "",
    "JSON {}",
    "TEXT named_metrics.num_requests_running=3",
    "TEXT named_metrics.num_requests_running=-1, named_metrics.num_requests_waiting=0",
    "TEXT named_metrics.num_requests_running=x, named_metrics.num_requests_waiting=0",
  ])("gives nothing for %s", (value) => {
    expect(parseEndpointLoad(value)).toBeUndefined();
  });
});
