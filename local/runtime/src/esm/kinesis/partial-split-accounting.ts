/**
 * How a partial answer that splits a batch is counted against `MaximumRetryAttempts` when
 * BisectBatchOnFunctionError and ReportBatchItemFailures are both on (docs/aws-semantics.md §1.4 "Bisect on").
 * AWS documents the split ("bisected at the returned sequence number") and that splitting does not use up
 * the retry quota (§1.3), but not whether this split is such a split: that is undocumented, so both are
 * offered. With bisect off a partial answer is no split and always uses an attempt (§1.4, recorded).
 */
export const PartialSplitAccounting = {
  /** The split uses no attempt, as AWS documents for splitting (§1.3): the default. */
  SplitFree: "split-free",
  /** The split uses one attempt, as a partial answer does with bisect off (§1.4, recorded). */
  CountsAttempt: "counts-attempt",
} as const;
export type PartialSplitAccounting = (typeof PartialSplitAccounting)[keyof typeof PartialSplitAccounting];

const ACCOUNTINGS: readonly string[] = Object.values(PartialSplitAccounting);

/** A mapping option the local ESM cannot run with: which option, what it was given, what it takes. */
export class InvalidEsmOptionError extends Error {
  override readonly name = "InvalidEsmOptionError";
  constructor(
    readonly option: string,
    readonly value: unknown,
    readonly expected: readonly string[],
  ) {
    super(
      `${option} must be one of ${expected.map((e) => `"${e}"`).join(", ")}, got ${JSON.stringify(value)}`,
    );
  }
}

/**
 * The accounting a mapping runs with: the default when none is given; a value that is not one of them
 * (from JavaScript, or a parsed setting) is refused with InvalidEsmOptionError.
 */
export function partialSplitAccountingOf(value: unknown): PartialSplitAccounting {
  if (value === undefined) return PartialSplitAccounting.SplitFree;
  if (!ACCOUNTINGS.includes(value as string)) {
    throw new InvalidEsmOptionError("partialSplitAccounting", value, ACCOUNTINGS);
  }
  return value as PartialSplitAccounting;
}
