// A binary min-heap of (rank, position) pairs ordered by rank, then position: the merge
// queue of long BPE words. Both fit in 26 bits here, so one float64 key orders them.

const POSITIONS = 2 ** 26;

export class MinHeap {
  private keys: Float64Array;
  size = 0;

  constructor(capacity: number) {
    this.keys = new Float64Array(Math.max(16, capacity));
  }

  push(rank: number, position: number): void {
    if (this.size === this.keys.length) {
      const grown = new Float64Array(this.keys.length * 2);
      grown.set(this.keys);
      this.keys = grown;
    }
    const key = rank * POSITIONS + position;
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const above = this.keys[parent] ?? 0;
      if (above <= key) break;
      this.keys[i] = above;
      i = parent;
    }
    this.keys[i] = key;
  }

  /** Removes the smallest pair and returns it as [rank, position]. */
  pop(): [number, number] {
    const top = this.keys[0] ?? 0;
    const last = --this.size;
    const key = this.keys[last] ?? 0;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= last) break;
      if (child + 1 < last && (this.keys[child + 1] ?? 0) < (this.keys[child] ?? 0)) child++;
      const below = this.keys[child] ?? 0;
      if (below >= key) break;
      this.keys[i] = below;
      i = child;
    }
    this.keys[i] = key;
    const rank = Math.floor(top / POSITIONS);
    return [rank, top - rank * POSITIONS];
  }
}
