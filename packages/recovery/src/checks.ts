/** What a check before an operation found: it passed, it failed (the operation must not run), or the endpoint could not answer it. */
export const CheckStatus = {
  Passed: "passed",
  Failed: "failed",
  NotChecked: "not-checked",
} as const;
export type CheckStatus = (typeof CheckStatus)[keyof typeof CheckStatus];

export interface Check {
  /** What was checked, e.g. "stream", "records' stream", "account". */
  readonly name: string;
  readonly status: CheckStatus;
  /** What was found, naming both sides of a mismatch. */
  readonly detail: string;
}

export const passed = (name: string, detail: string): Check => ({ name, status: CheckStatus.Passed, detail });
export const failed = (name: string, detail: string): Check => ({ name, status: CheckStatus.Failed, detail });
export const notChecked = (name: string, detail: string): Check => ({
  name,
  status: CheckStatus.NotChecked,
  detail,
});

/** The checks that failed: an operation runs only when there are none. */
export const refusals = (checks: readonly Check[]): Check[] =>
  checks.filter((c) => c.status === CheckStatus.Failed);

/** An operation refused before it changed anything: `checks` are the ones that failed, each naming why. */
export class RecoveryRefusedError extends Error {
  readonly checks: readonly Check[];

  constructor(operation: string, checks: readonly Check[]) {
    super(`${operation} refused, nothing done: ${checks.map((c) => `${c.name}: ${c.detail}`).join("; ")}`);
    this.name = "RecoveryRefusedError";
    this.checks = checks;
  }
}
