/**
 * The tests' closing summary for CI (.ci/run and .github/workflows/ci.yml): one line per function
 * (functions/<name>: its handler, config and core tests), then the totals, from vitest's JSON report.
 * Given a second file (GitHub's $GITHUB_STEP_SUMMARY), the same as a table appended to it. Fails when no test ran, or
 * when a function has no test: each function's own tests are what `turbo run test --filter` runs.
 *
 *   tsx scripts/ci/test-summary.ts .tmp/vitest.json ["$GITHUB_STEP_SUMMARY"]
 */
import { appendFile, readdir, readFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";
import { ExitCode, runIfMain } from "@mcp-pipeline/cli";

/** The part of vitest's JSON report read here. */
export interface VitestReport {
  readonly numTotalTests: number;
  readonly numPassedTests: number;
  readonly numFailedTests: number;
  readonly numPendingTests: number;
  readonly numTodoTests: number;
  readonly testResults: readonly {
    readonly name: string;
    readonly assertionResults: readonly { readonly status: string }[];
  }[];
}

export interface Counts {
  readonly files: number;
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

const counted = (statuses: readonly string[], files: number): Counts => ({
  files,
  passed: statuses.filter((s) => s === "passed").length,
  failed: statuses.filter((s) => s === "failed").length,
  skipped: statuses.filter((s) => s !== "passed" && s !== "failed").length,
});

/** Each function's tests, by the function's folder name; a function without tests counts zero. */
export function perFunction(
  report: VitestReport,
  root: string,
  functions: readonly string[],
): Map<string, Counts> {
  return new Map(
    functions.map((name) => {
      const files = report.testResults.filter((file) =>
        relative(root, file.name).startsWith(`functions${sep}${name}${sep}`),
      );
      return [
        name,
        counted(
          files.flatMap((f) => f.assertionResults.map((a) => a.status)),
          files.length,
        ),
      ];
    }),
  );
}

const line = (c: Pick<Counts, "passed" | "failed" | "skipped">) =>
  `${c.passed} passed, ${c.failed} failed, ${c.skipped} skipped`;

/** The plain lines: one per function, then the totals (the run's last line, as before). */
export function summaryLines(report: VitestReport, functions: ReadonlyMap<string, Counts>): string[] {
  const width = Math.max(0, ...[...functions.keys()].map((n) => n.length));
  return [
    ...[...functions].map(([name, c]) => `functions/${name.padEnd(width)}  ${line(c)} (${c.files} files)`),
    `tests: ${line({
      passed: report.numPassedTests,
      failed: report.numFailedTests,
      skipped: report.numPendingTests + report.numTodoTests,
    })}`,
  ];
}

export function summaryTable(report: VitestReport, functions: ReadonlyMap<string, Counts>): string {
  const rows = [...functions].map(
    ([name, c]) => `| ${name} | ${c.files} | ${c.passed} | ${c.failed} | ${c.skipped} |`,
  );
  const all = `| **all tests** | ${report.testResults.length} | ${report.numPassedTests} | ${report.numFailedTests} | ${report.numPendingTests + report.numTodoTests} |`;
  return [
    "### Tests",
    "",
    "| function | files | passed | failed | skipped |",
    "| --- | --: | --: | --: | --: |",
    ...rows,
    all,
    "",
  ].join("\n");
}

async function main(argv: readonly string[]): Promise<number> {
  const [file = ".tmp/vitest.json", stepSummary] = argv;
  const root = process.cwd();
  const report = JSON.parse(await readFile(file, "utf8")) as VitestReport;
  const names = (await readdir(join(root, "functions"), { withFileTypes: true }))
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
  const functions = perFunction(report, root, names);
  for (const text of summaryLines(report, functions)) console.log(text);
  if (stepSummary) await appendFile(stepSummary, summaryTable(report, functions));
  if (report.numTotalTests === 0) {
    console.error("no tests ran");
    return ExitCode.Failed;
  }
  const untested = [...functions].filter(([, c]) => c.passed + c.failed === 0).map(([name]) => name);
  if (untested.length > 0) {
    console.error(`functions without tests: ${untested.join(", ")}`);
    return ExitCode.Failed;
  }
  return report.numFailedTests > 0 ? ExitCode.Failed : ExitCode.Ok;
}

runIfMain(import.meta.url, main, ExitCode.Failed);
