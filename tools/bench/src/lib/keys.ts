/**
 * Partition keys of a benchmark batch: spread evenly over a number of keys, or Zipf-skewed (a few hot
 * keys hold most records, as user or tenant ids usually do). Deterministic, so every contender of a run
 * and every run of the benchmark sees the same batch.
 */

/** `n` records over `keyCount` keys, evenly, in a shuffled order (7919 is prime: a permutation of residues). */
export function spreadKeys(n: number, keyCount: number): string[] {
  assertCount("records", n, 0);
  assertCount("keys", keyCount, 1);
  return Array.from({ length: n }, (_, i) => `k${(i * 7919) % keyCount}`);
}

/**
 * `n` records whose keys are drawn from `keyCount` keys with Zipf's law: the key of rank r (1-based) is
 * drawn with probability proportional to 1 / r^exponent. `random` returns numbers in [0, 1) (a seeded
 * generator). Key `z1` is the hottest.
 */
export function zipfKeys(n: number, keyCount: number, exponent: number, random: () => number): string[] {
  assertCount("records", n, 0);
  assertCount("keys", keyCount, 1);
  if (!Number.isFinite(exponent) || exponent < 0) {
    throw new RangeError(`Zipf exponent must be a finite number >= 0, got ${exponent}`);
  }
  const cumulative: number[] = [];
  let total = 0;
  for (let rank = 1; rank <= keyCount; rank++) {
    total += 1 / rank ** exponent;
    cumulative.push(total);
  }
  return Array.from({ length: n }, () => {
    const u = random() * total;
    // The first rank whose cumulative weight exceeds u (binary search: keyCount may be large).
    let lo = 0;
    let hi = keyCount - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((cumulative[mid] ?? total) > u) hi = mid;
      else lo = mid + 1;
    }
    return `z${lo + 1}`;
  });
}

function assertCount(what: string, value: number, min: number): void {
  if (!Number.isInteger(value) || value < min) {
    throw new RangeError(`number of ${what} must be a whole number >= ${min}, got ${value}`);
  }
}
