// Replica choice (src/runtime/origin/replica-choice.ts): prompts sharing a block-aligned prefix
// go to one replica, new prefixes spread by weight, load is bounded, unhealthy replicas are
// skipped, and a pool with nothing known to be healthy fails open.
import { describe, expect, it } from "vitest";
import {
  blockHashes,
  chooseReplicas,
  type ChoiceInput,
  type ReplicaView,
} from "../../../../src/runtime/origin/replica-choice";

const replica = (url: string, extra: Partial<ReplicaView> = {}): ReplicaView => ({
  url,
  weight: 1,
  inFlight: 0,
  healthy: true,
  ...extra,
});
const ids = (from: number, count: number) => Array.from({ length: count }, (_, i) => from + i);

function choose(input: Partial<ChoiceInput>) {
  return chooseReplicas({
    replicas: [replica("http://a"), replica("http://b"), replica("http://c")],
    policy: "affinity",
    hashes: [],
    servedBy: () => [],
    turn: 0,
    ...input,
  });
}

describe("block hashes", () => {
  it("hash whole blocks only, and equal prefixes give equal chained hashes", () => {
    const first = blockHashes(ids(0, 40));
    expect(first).toHaveLength(2);
    const longer = blockHashes([...ids(0, 40), ...ids(500, 30)]);
    expect(longer.slice(0, 2)).toEqual(first);
    expect(longer).toHaveLength(4);
    // One id changed in the first block changes every hash after it.
    const changed = blockHashes([7, ...ids(1, 39)]);
    expect(changed[0]).not.toBe(first[0]);
    expect(changed[1]).not.toBe(first[1]);
  });
});

describe("replica choice", () => {
  it("sends the same prompt to the same replica, and new prompts across all of them", () => {
    const first = new Map<string, number>();
    for (let prompt = 0; prompt < 300; prompt += 1) {
      const hashes = blockHashes(ids(prompt * 1000, 32));
      const once = choose({ hashes }).order[0]!.url;
      expect(choose({ hashes }).order[0]!.url).toBe(once);
      first.set(once, (first.get(once) ?? 0) + 1);
    }
    expect([...first.keys()].sort()).toEqual(["http://a", "http://b", "http://c"]);
    for (const count of first.values()) expect(count).toBeGreaterThan(60);
  });

  it("weights share new prefixes: a replica of weight 3 takes about three times as many", () => {
    const counts = new Map<string, number>();
    for (let prompt = 0; prompt < 2000; prompt += 1) {
      const url = choose({
        replicas: [replica("http://a", { weight: 3 }), replica("http://b")],
        hashes: blockHashes(ids(prompt * 1000, 16)),
      }).order[0]!.url;
      counts.set(url, (counts.get(url) ?? 0) + 1);
    }
    const ratio = (counts.get("http://a") ?? 0) / (counts.get("http://b") ?? 1);
    expect(ratio).toBeGreaterThan(2.5);
    expect(ratio).toBeLessThan(3.5);
  });

  it("sends a longer prompt where its longest known prefix went", () => {
    const turnOne = blockHashes(ids(0, 48));
    const turnTwo = blockHashes([...ids(0, 48), ...ids(900, 40)]);
    const served = new Map([[turnOne[2]!, ["http://c"]]]);
    const choice = choose({ hashes: turnTwo, servedBy: (hash) => served.get(hash) ?? [] });
    expect(choice.order[0]!.url).toBe("http://c");
    expect(choice.reason).toBe("affinity");
  });

  it("sends new prompts behind a prefix every replica served to the least loaded (spread)", () => {
    const system = ids(0, 48);
    const everywhere = new Map(
      blockHashes(system).map((hash) => [hash, ["http://a", "http://b", "http://c"]]),
    );
    const first = new Set<string>();
    for (let user = 1; user <= 30; user += 1) {
      const choice = choose({
        hashes: blockHashes([...system, ...ids(user * 1000, 40)]),
        servedBy: (hash) => everywhere.get(hash) ?? [],
      });
      expect(choice.reason).toBe("affinity");
      first.add(choice.order[0]!.url);
    }
    expect([...first].sort()).toEqual(["http://a", "http://b", "http://c"]);
    const loaded = ["http://a", "http://b", "http://c"].map((url) =>
      replica(url, { inFlight: url === "http://b" ? 0 : 1 }),
    );
    const choice = choose({
      replicas: loaded,
      hashes: blockHashes([...system, ...ids(7000, 40)]),
      servedBy: (hash) => everywhere.get(hash) ?? [],
    });
    expect(choice.order[0]!.url).toBe("http://b");
  });

  it("counts a prefix two replicas served as held by all: an idle third gets new conversations", () => {
    const system = ids(0, 64);
    const onTwo = new Map(blockHashes(system).map((hash) => [hash, ["http://a", "http://b"]]));
    // Nothing waits anywhere (a light load): the third computes the prompt once, then holds it.
    const replicas = ["http://a", "http://b", "http://c"].map((url) =>
      replica(url, { inFlight: url === "http://c" ? 0 : 1, waiting: 0, queuedTokens: 0 }),
    );
    const choice = choose({
      replicas,
      hashes: blockHashes([...system, ...ids(9000, 24)]),
      servedBy: (hash) => onTwo.get(hash) ?? [],
    });
    expect(choice.order[0]!.url).toBe("http://c");
    expect(choice.reason).toBe("affinity");
    // What it really computes there is still counted for its queue: the whole prompt.
    expect(choice.uncached?.get("http://c")).toBe(80);
    // A conversation's own history, held by one replica only, still goes back to it.
    const own = new Map(blockHashes(system).map((hash) => [hash, ["http://a"]]));
    const back = choose({
      replicas,
      hashes: blockHashes([...system, ...ids(9000, 24)]),
      servedBy: (hash) => own.get(hash) ?? [],
    });
    expect(back.order[0]!.url).toBe("http://a");
  });

  it("spills a hot prefix to another replica once its replica holds more than its share", () => {
    const hashes = blockHashes(ids(0, 32));
    const home = choose({ hashes }).order[0]!.url;
    const loaded = ["http://a", "http://b", "http://c"].map((url) =>
      replica(url, { inFlight: url === home ? 4 : 1 }),
    );
    const choice = choose({ replicas: loaded, hashes });
    expect(choice.order[0]!.url).not.toBe(home);
    expect(choice.order.at(-1)!.url).toBe(home);
    expect(choice.reason).toBe("spill");
  });

  it("keeps a prefix on its replica at a light load: one request more than the idlest", () => {
    const hashes = blockHashes(ids(0, 32));
    const home = choose({ hashes }).order[0]!.url;
    const light = ["http://a", "http://b", "http://c"].map((url) =>
      replica(url, { inFlight: url === home ? 1 : 0 }),
    );
    // The fair share of two requests over three replicas rounds to one; the slack keeps it home.
    expect(choose({ replicas: light, hashes }).order[0]!.url).toBe(home);
    const two = light.map((view) => (view.url === home ? { ...view, inFlight: 2 } : view));
    expect(choose({ replicas: two, hashes }).reason).toBe("spill");
  });

  it("leaves its cached replica only when the prefill queued there outweighs recomputing", () => {
    const history = ids(0, 512);
    const hashes = blockHashes(history);
    const home = choose({ hashes }).order[0]!.url;
    const servedBy = () => [home];
    const queued = (tokens: number) =>
      ["http://a", "http://b", "http://c"].map((url) =>
        replica(url, url === home ? { waiting: 2, queuedTokens: tokens } : { waiting: 0 }),
      );
    // 400 tokens ahead of it there against its 512 elsewhere: it waits.
    const stays = choose({ replicas: queued(400), hashes, servedBy });
    expect(stays.order[0]!.url).toBe(home);
    expect(stays.reason).toBe("affinity");
    expect(stays.uncached?.get(home)).toBe(0);
    const spills = choose({ replicas: queued(600), hashes, servedBy });
    expect(spills.order[0]!.url).not.toBe(home);
    expect(spills.reason).toBe("spill");
  });

  it("keeps a turn on a replica over its in-flight bound while nothing waits there", () => {
    const hashes = blockHashes(ids(0, 32));
    const home = choose({ hashes }).order[0]!.url;
    const servedBy = () => [home];
    const loaded = (waiting: number) =>
      ["http://a", "http://b", "http://c"].map((url) =>
        replica(url, url === home ? { inFlight: 4, waiting } : { inFlight: 1, waiting: 0 }),
      );
    // Four running share its decode steps; one queued there waits for a prefill.
    expect(choose({ replicas: loaded(0), hashes, servedBy }).order[0]!.url).toBe(home);
    const spill = choose({ replicas: loaded(1), hashes, servedBy });
    expect(spill.order.at(-1)!.url).toBe(home);
    expect(spill.reason).toBe("spill");
  });

  it("counts a replica's own report of its queue when it exceeds this isolate's count", () => {
    const hashes = blockHashes(ids(0, 32));
    const home = choose({ hashes }).order[0]!.url;
    const reported = ["http://a", "http://b", "http://c"].map((url) =>
      replica(url, url === home ? { inFlight: 1, reported: 9 } : { inFlight: 1 }),
    );
    expect(choose({ replicas: reported, hashes }).order.at(-1)!.url).toBe(home);
    const least = choose({
      replicas: [replica("http://a", { reported: 5 }), replica("http://b", { inFlight: 2 })],
    });
    expect(least.order[0]!.url).toBe("http://b");
  });

  it("skips unhealthy replicas, puts busy ones last, and fails open when none is healthy", () => {
    const hashes = blockHashes(ids(0, 32));
    const home = choose({ hashes }).order[0]!.url;
    const sick = choose({
      replicas: ["http://a", "http://b", "http://c"].map((url) =>
        replica(url, { healthy: url !== home }),
      ),
      hashes,
    });
    expect(sick.order.map((view) => view.url)).not.toContain(home);
    expect(sick.order).toHaveLength(2);
    const busy = choose({
      replicas: ["http://a", "http://b", "http://c"].map((url) =>
        replica(url, { busy: url === home }),
      ),
      hashes,
    });
    expect(busy.order.at(-1)!.url).toBe(home);
    const none = choose({
      replicas: ["http://a", "http://b"].map((url) => replica(url, { healthy: false })),
      hashes,
    });
    expect(none.order).toHaveLength(2);
    expect(none.reason).toBe("fail-open");
  });

  it("without prompt ids, takes the least loaded relative to weight; round-robin takes turns", () => {
    const replicas = [
      replica("http://a", { inFlight: 3 }),
      replica("http://b", { inFlight: 2, weight: 4 }),
      replica("http://c", { inFlight: 1 }),
    ];
    expect(choose({ replicas }).order.map((view) => view.url)).toEqual([
      "http://b",
      "http://c",
      "http://a",
    ]);
    const turns = [0, 1, 2, 3].map((turn) => choose({ policy: "round-robin", turn }).order[0]!.url);
    expect(turns).toEqual(["http://a", "http://b", "http://c", "http://a"]);
  });
});
