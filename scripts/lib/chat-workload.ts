// The pool benchmark's seeded multi-turn chat workload: conversations whose turns resend the
// history (most open with one hot system prompt, the skew), with an open loop's arrival times
// and the users' think times between turns.

/** A seeded PRNG (mulberry32). */
export function rng(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
const idsOf = (random: () => number, count: number) =>
  Array.from({ length: count }, () => 4 + Math.floor(random() * 500));

export interface Conversation {
  system: number[];
  users: number[][];
  /** Open loop: ms after the start that it begins, and the user's pause before each next turn. */
  arrival: number;
  thinks: number[];
}

export interface WorkloadOptions {
  conversations: number;
  turns: number;
  systemTokens: number;
  /** Each turn's user text: this many tokens and up to 15 more. */
  userTokens: number;
  /** Conversations starting per second (Poisson); 0: all at once (a closed loop). */
  rate: number;
  /** Mean ms between an answer and the next turn (exponential). */
  thinkMs: number;
}

/** 70% of conversations open with one hot system prompt, the rest with one of eight others. */
export function workload(options: WorkloadOptions): Conversation[] {
  const random = rng(37);
  const hot = idsOf(random, options.systemTokens);
  const cold = Array.from({ length: 8 }, () => idsOf(random, options.systemTokens));
  const conversations = Array.from({ length: options.conversations }, () => ({
    system: random() < 0.7 ? hot : cold[Math.floor(random() * 8)]!,
    users: Array.from({ length: options.turns }, () =>
      idsOf(random, options.userTokens + Math.floor(random() * 16)),
    ),
    arrival: 0,
    thinks: [] as number[],
  }));
  // Drawn apart, so that the closed loop's prompts stay those of earlier runs.
  const timing = rng(41);
  const exponential = (mean: number) => -mean * Math.log(1 - timing());
  let at = 0;
  for (const conversation of conversations) {
    at += options.rate > 0 ? exponential(1000 / options.rate) : 0;
    conversation.arrival = at;
    conversation.thinks = Array.from({ length: options.turns - 1 }, () =>
      exponential(options.thinkMs),
    );
  }
  return conversations;
}
