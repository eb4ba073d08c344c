// What the isolate knows of each replica (src/runtime/origin/replica-pool.ts): in-flight counts
// from leases (waiting until their first token, their prefill queued until a later one there
// starts), a conversation sent back where its prefix went, a draining replica rested and then
// probed back into rotation, a busy one tried last, an open circuit skipped.
import { describe, expect, it } from "vitest";
import { createBreakers } from "../../../../src/runtime/origin/circuit-breaker";
import type { Replica } from "../../../../src/runtime/origin/pool-config";
import { createFleet } from "../../../../src/runtime/origin/replica-pool";

const pool: Replica[] = ["http://a", "http://b", "http://c"].map((url) => ({ url, weight: 1 }));
const prompt = Array.from({ length: 64 }, (_, i) => 10 + i);

/** A fleet on a clock of its own whose probes all answer `ready`. */
function fleetAt(ready: boolean) {
  let clock = 1_000_000;
  const probes: string[] = [];
  const fleet = createFleet({
    breakers: createBreakers(),
    now: () => clock,
    probe: (url) => {
      probes.push(url);
      return Promise.resolve(ready);
    },
  });
  return { fleet, probes, advance: (ms: number) => (clock += ms) };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe("the fleet", () => {
  it("counts leases in flight until released, once", () => {
    const { fleet } = fleetAt(true);
    const first = fleet.lease("http://a");
    fleet.lease("http://a");
    expect(fleet.inFlight()).toEqual({ "http://a": 2 });
    first.release();
    first.release();
    expect(fleet.inFlight()).toEqual({ "http://a": 1 });
  });

  it("sends the next turn of a conversation where the last one was served", () => {
    const { fleet } = fleetAt(true);
    const home = fleet.choose(pool, prompt, "/health")[0]!;
    const elsewhere = pool.map((replica) => replica.url).find((url) => url !== home)!;
    fleet.served(elsewhere, prompt);
    const nextTurn = [...prompt, ...Array.from({ length: 40 }, (_, i) => 300 + i)];
    expect(fleet.choose(pool, nextTurn, "/health")[0]).toBe(elsewhere);
    expect(fleet.reasons()).toMatchObject({ affinity: 1 });
  });

  it("counts a lease as waiting, with its prompt's uncached tokens, until its first token", () => {
    const { fleet } = fleetAt(true);
    const history = Array.from({ length: 512 }, (_, i) => 1000 + i);
    const home = fleet.choose(pool, history, "/health")[0]!;
    fleet.served(home, history);
    // A long prompt that replica had not served waits there for its prefill: the history
    // (512 tokens cached there, none elsewhere) goes where it computes less before its start.
    const long = Array.from({ length: 2000 }, (_, i) => 5000 + i);
    const queued = fleet.lease(home, long);
    expect(fleet.choose(pool, history, "/health")[0]).not.toBe(home);
    queued.started();
    expect(fleet.choose(pool, history, "/health")[0]).toBe(home);
    queued.release();
    expect(fleet.inFlight()[home]).toBe(0);
  });

  it("stops counting a lease's prefill once a later one there got its first token", () => {
    const { fleet } = fleetAt(true);
    const history = Array.from({ length: 512 }, (_, i) => 1000 + i);
    const home = fleet.choose(pool, history, "/health")[0]!;
    fleet.served(home, history);
    const long = Array.from({ length: 2000 }, (_, i) => 5000 + i);
    const stalled = fleet.lease(home, long);
    expect(fleet.choose(pool, history, "/health")[0]).not.toBe(home);
    // A request sent after it starts first: the replica took the long prompt before it (it
    // queues in order), so its first token is late on the way, and no prefill waits there.
    const later = fleet.lease(home, prompt);
    later.started();
    later.release();
    expect(fleet.choose(pool, history, "/health")[0]).toBe(home);
    expect(fleet.inFlight()[home]).toBe(1);
    // Still waiting for its first token, it keeps the in-flight bound on: two more running
    // there put the replica over it (3 against the least loaded's 0 + 2).
    for (const lease of [fleet.lease(home, prompt), fleet.lease(home, prompt)]) lease.started();
    expect(fleet.choose(pool, history, "/health")[0]).not.toBe(home);
    stalled.release();
    expect(fleet.choose(pool, history, "/health")[0]).toBe(home);
  });

  it("rests a draining replica, then takes it back once its probe answers 200", async () => {
    const { fleet, probes, advance } = fleetAt(true);
    const home = fleet.choose(pool, prompt, "/health")[0]!;
    fleet.draining(home, 2);
    expect(fleet.choose(pool, prompt, "/health")).not.toContain(home);
    advance(2_000);
    // Rest over: the probe goes out; until it answers, the replica stays out.
    expect(fleet.choose(pool, prompt, "/health")).not.toContain(home);
    expect(probes).toEqual([`${home}/health`]);
    await settle();
    expect(fleet.choose(pool, prompt, "/health")[0]).toBe(home);
  });

  it("keeps a replica out while its probe fails, and probes it again later", async () => {
    const { fleet, probes, advance } = fleetAt(false);
    fleet.draining("http://a", 1);
    advance(1_000);
    fleet.choose(pool, prompt, "/health");
    await settle();
    advance(1_000);
    expect(fleet.choose(pool, prompt, "/health")).not.toContain("http://a");
    expect(probes).toHaveLength(1);
    advance(5_000);
    fleet.choose(pool, prompt, "/health");
    expect(probes).toHaveLength(2);
  });

  it("counts a replica's report of its queue for 2 s, then its own counts again", () => {
    const { fleet, advance } = fleetAt(true);
    const home = fleet.choose(pool, prompt, "/health")[0]!;
    // Its own request is part of what it reports: alone, it does not count against it.
    const lease = fleet.lease(home);
    fleet.reported(home, { running: 1, waiting: 0 });
    lease.release();
    expect(fleet.choose(pool, prompt, "/health")[0]).toBe(home);
    fleet.reported(home, { running: 0, waiting: 50 });
    expect(fleet.choose(pool, prompt, "/health").at(-1)).toBe(home);
    advance(2_001);
    // A stale (or stuck) gauge no longer keeps it out of its turn.
    expect(fleet.choose(pool, prompt, "/health")[0]).toBe(home);
  });

  it("tries a busy replica last, and skips one whose circuit is open", () => {
    const breakers = createBreakers();
    const fleet = createFleet({ breakers, now: () => 0 });
    const home = fleet.choose(pool, prompt, "/health")[0]!;
    fleet.busy(home);
    expect(fleet.choose(pool, prompt, "/health").at(-1)).toBe(home);
    for (let failure = 0; failure < 5; failure += 1) breakers("http://b").failure();
    expect(fleet.choose(pool, undefined, "/health")).not.toContain("http://b");
  });
});
