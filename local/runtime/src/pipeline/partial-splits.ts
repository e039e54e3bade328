/**
 * How the local Kinesis mapping counts a bisect-on partial answer's split against MaximumRetryAttempts,
 * which AWS does not document (docs/aws-semantics.md §1.4; src/esm PartialSplitAccounting):
 * the command-line option of npm start and the chaos run, and how their summaries say which ran.
 */
import { UsageError } from "@mcp-pipeline/cli";
import { PartialSplitAccounting } from "../esm/kinesis/partial-split-accounting.js";

const ACCOUNTINGS: readonly string[] = Object.values(PartialSplitAccounting);

/** `--partial-split-accounting`: the local ESM's default (AWS's wording) when absent; anything else refused. */
export function partialSplitAccountingOption(value: string | undefined): PartialSplitAccounting {
  if (value === undefined) return PartialSplitAccounting.SplitFree;
  if (!ACCOUNTINGS.includes(value)) {
    throw new UsageError(
      `--partial-split-accounting must be one of ${ACCOUNTINGS.join(", ")}, got "${value}"`,
    );
  }
  return value as PartialSplitAccounting;
}

/**
 * What a run's partial answers did to the retry quota: the accounting it ran with, or null when the
 * environment's mapping does not split on a partial answer (bisect or ReportBatchItemFailures off).
 */
export type PartialSplits = PartialSplitAccounting | null;

/** The value and the reason, for a summary line. */
export function describePartialSplits(splits: PartialSplits): { value: string; why: string } {
  if (splits === null) {
    return {
      value: "none",
      why: "bisect or ReportBatchItemFailures off: a partial answer is no split (with bisect off it uses a retry, §1.4)",
    };
  }
  return {
    value: splits,
    why: `bisect on: a partial answer's split ${splits === PartialSplitAccounting.SplitFree ? "uses no retry" : "uses a retry"}; AWS does not say which (§1.4), --partial-split-accounting chooses`,
  };
}
