// A one-consumer async queue: the engine pushes a request's steps as they are decoded,
// the route reads them with `for await`. Ending or failing it wakes the reader.
export class Channel<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private failWaiting: ((error: unknown) => void) | undefined;
  private done = false;
  private error: unknown;

  push(item: T): void {
    if (this.done) return;
    const wake = this.waiting;
    if (wake !== undefined) {
      this.waiting = this.failWaiting = undefined;
      wake({ value: item, done: false });
    } else this.items.push(item);
  }

  close(error?: unknown): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    const [wake, fail] = [this.waiting, this.failWaiting];
    this.waiting = this.failWaiting = undefined;
    if (error !== undefined) fail?.(error);
    else wake?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        const item = this.items.shift();
        if (item !== undefined) return Promise.resolve({ value: item, done: false });
        if (this.done)
          return this.error === undefined
            ? Promise.resolve({ value: undefined, done: true })
            : Promise.reject(this.error);
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.failWaiting = reject;
        });
      },
    };
  }
}
