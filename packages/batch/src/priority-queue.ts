/** A binary min-heap by `before`. Picking the next key is O(log K) so a 10,000-record batch stays cheap. */
export class PriorityQueue<T> {
  readonly #items: T[] = [];
  readonly #before: (a: T, b: T) => boolean;

  constructor(before: (a: T, b: T) => boolean) {
    this.#before = before;
  }

  get size(): number {
    return this.#items.length;
  }

  push(item: T): void {
    const items = this.#items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.#before(items[i] as T, items[parent] as T)) break;
      [items[i], items[parent]] = [items[parent] as T, items[i] as T];
      i = parent;
    }
  }

  peek(): T | undefined {
    return this.#items[0];
  }

  pop(): T | undefined {
    const items = this.#items;
    const top = items[0];
    const last = items.pop();
    if (items.length > 0 && last !== undefined) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < items.length && this.#before(items[l] as T, items[best] as T)) best = l;
        if (r < items.length && this.#before(items[r] as T, items[best] as T)) best = r;
        if (best === i) break;
        [items[i], items[best]] = [items[best] as T, items[i] as T];
        i = best;
      }
    }
    return top;
  }

  drain(): T[] {
    return this.#items.splice(0);
  }
}
