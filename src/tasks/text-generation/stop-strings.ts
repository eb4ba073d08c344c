// Stop strings matched at the edge across token boundaries: text that could still be the
// start of a stop string is held back, so no byte of a matched stop string is ever sent,
// and held-back text that turns out not to be one is released (at the latest at the end).

export interface StopMatch {
  /** Text safe to send now. */
  text: string;
  /** The stop string that matched; generation ends here. */
  stop?: string;
}

export interface StopMatcher {
  push(delta: string): StopMatch;
  /** At the end of generation: everything still held back. */
  flush(): string;
}

export function stopMatcher(stops: readonly string[]): StopMatcher {
  const active = stops.filter((stop) => stop.length > 0);
  let pending = "";
  return {
    push(delta) {
      if (active.length === 0) return { text: delta };
      pending += delta;
      let first: { at: number; stop: string } | undefined;
      for (const stop of active) {
        const at = pending.indexOf(stop);
        if (at !== -1 && (first === undefined || at < first.at)) first = { at, stop };
      }
      if (first !== undefined) {
        const text = pending.slice(0, first.at);
        pending = "";
        return { text, stop: first.stop };
      }
      // Hold back the longest tail that begins some stop string.
      let hold = 0;
      for (const stop of active) {
        for (let length = Math.min(stop.length - 1, pending.length); length > hold; length -= 1) {
          if (stop.startsWith(pending.slice(pending.length - length))) {
            hold = length;
            break;
          }
        }
      }
      const text = pending.slice(0, pending.length - hold);
      pending = pending.slice(pending.length - hold);
      return { text };
    },
    flush() {
      const text = pending;
      pending = "";
      return text;
    },
  };
}
