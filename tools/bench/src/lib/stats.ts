/** Summaries of repeated measurements: the median, with the spread (min-max) beside it. */

export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** The median (the mean of the middle two for an even count) and the range; throws on no samples. */
export function spreadOf(samples: readonly number[]): Spread {
  if (samples.length === 0) throw new RangeError("no samples to summarise");
  const sorted = [...samples].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median =
    sorted.length % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  return { median, min: sorted[0] as number, max: sorted[sorted.length - 1] as number };
}

/** "median (min-max)", each with `digits` decimals; just the median when every sample agrees. */
export function formatSpread(s: Spread, digits = 0): string {
  const f = (x: number) => x.toFixed(digits);
  return f(s.min) === f(s.max) ? f(s.median) : `${f(s.median)} (${f(s.min)}-${f(s.max)})`;
}
