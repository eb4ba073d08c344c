// Stop strings matched at the edge across token boundaries: text that could still start a stop
// string is held back, so no byte of a matched one is ever sent.

export interface StopMatch {
  /** Text safe to send now. */
  text: string;
  /** The stop string that matched; generation ends here. */
  stop?: string;
}

export interface StopMatcher {
  /** Adds text; with `search: false` no stop string may end in it (it may begin there). */
  push(delta: string, options?: { search?: boolean }): StopMatch;
  /** At the end of generation: everything still held back. */
  flush(): string;
}

/**
 * Held-back text that turns out not to be a stop string is released (at the latest at the end).
 * Text pushed with `search: false` (vLLM's min_tokens) cannot hold a match: only a stop string that
 * ends in text pushed later counts (as vLLM's check_stop_strings searches from the last len(stop) -
 * 1 characters already seen). With `include` (vLLM's include_stop_str_in_output) the matched stop
 * string is sent too, as the text's end: the text is cut after it instead of before it.
 */
export function stopMatcher(
  stops: readonly string[],
  options: { include?: boolean } = {},
): StopMatcher {
  const include = options.include ?? false;
  const active = stops.filter((stop) => stop.length > 0);
  let pending = "";
  /**
   * Characters at the start of `pending` where no stop string may end (pushed with search: false).
   */
  let unsearched = 0;
  return {
    push(delta, options) {
      if (active.length === 0) return { text: delta };
      const search = options?.search !== false;
      pending += delta;
      let first: { at: number; stop: string } | undefined;
      for (const stop of search ? active : []) {
        const at = pending.indexOf(stop, Math.max(0, unsearched - stop.length + 1));
        if (at !== -1 && (first === undefined || at < first.at)) first = { at, stop };
      }
      if (first !== undefined) {
        const text = pending.slice(0, include ? first.at + first.stop.length : first.at);
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
      unsearched = search ? 0 : pending.length;
      return { text };
    },
    flush() {
      const text = pending;
      pending = "";
      unsearched = 0;
      return text;
    },
  };
}
