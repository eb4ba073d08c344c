// A one-consumer async queue for a diffusion request's events: the engine pushes, the
// route reads with `for await`; closing (or failing) wakes the reader.
export class EventQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private wake: (() => void) | undefined;
  private closed = false;
  private error: unknown;

  push(item: T): void {
    if (this.closed) return;
    this.items.push(item);
    this.notify();
  }

  close(error?: unknown): void {
    if (this.closed) return;
    this.closed = true;
    this.error = error;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      const item = this.items.shift();
      if (item !== undefined) {
        yield item;
        continue;
      }
      if (this.closed) {
        if (this.error !== undefined) throw this.error;
        return;
      }
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
    }
  }
}
