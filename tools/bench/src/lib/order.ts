/**
 * The yardsticks of the batch benchmarks: the order-preserving bound (docs/architecture.md) and per-key order
 * violations, computed from the keys of a batch and the order its records' effects were applied in.
 */

/** Records per key. */
export function keyCounts(keys: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return counts;
}

/** The most records any one key holds (0 for an empty batch). */
export const hottestKey = (keys: readonly string[]): number => Math.max(0, ...keyCounts(keys).values());

/**
 * The shortest time in which `concurrency` workers can apply the batch while keeping each key's records
 * in order, each record taking `latencyMs`: max(ceil(N / C), max_k n_k) x L.
 */
export function orderPreservingBoundMs(
  keys: readonly string[],
  concurrency: number,
  latencyMs: number,
): number {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new RangeError(`concurrency must be a whole number >= 1, got ${concurrency}`);
  }
  if (!Number.isFinite(latencyMs) || latencyMs < 0) {
    throw new RangeError(`latency must be a finite number of milliseconds >= 0, got ${latencyMs}`);
  }
  return Math.max(Math.ceil(keys.length / concurrency), hottestKey(keys)) * latencyMs;
}

/**
 * Records applied while an earlier record of the same key (a lower index in the batch) had not been
 * applied yet. `applied` lists record indexes in the order their effects took place; a record missing
 * from it was never applied, so every later record of its key that was applied counts.
 */
export function orderViolations(keys: readonly string[], applied: readonly number[]): number {
  const indexesByKey = new Map<string, number[]>();
  keys.forEach((k, i) => {
    const list = indexesByKey.get(k);
    if (list) list.push(i);
    else indexesByKey.set(k, [i]);
  });
  // Per key, the position in its (ascending) index list of the earliest record not applied yet.
  const next = new Map<string, number>();
  const done = new Set<number>();
  let violations = 0;
  for (const index of applied) {
    const key = keys[index];
    if (key === undefined)
      throw new RangeError(`applied record ${index} is not in the batch of ${keys.length}`);
    if (done.has(index)) throw new RangeError(`record ${index} is listed as applied twice`);
    done.add(index);
    const list = indexesByKey.get(key) ?? [];
    let position = next.get(key) ?? 0;
    if ((list[position] ?? index) < index) violations += 1;
    while (position < list.length && done.has(list[position] ?? -1)) position += 1;
    next.set(key, position);
  }
  return violations;
}
