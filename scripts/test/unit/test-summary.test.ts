import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { perFunction, summaryLines, summaryTable, type VitestReport } from "../../ci/test-summary.ts";

const root = "/repo";
const file = (path: string, ...statuses: string[]) => ({
  name: join(root, path),
  assertionResults: statuses.map((status) => ({ status })),
});

const report: VitestReport = {
  numTotalTests: 7,
  numPassedTests: 5,
  numFailedTests: 1,
  numPendingTests: 1,
  numTodoTests: 0,
  testResults: [
    file("functions/processor/test/integration/handler.test.ts", "passed", "passed"),
    file("functions/processor/test/unit/config.test.ts", "failed"),
    file("functions/tool-worker/test/unit/config.test.ts", "passed", "skipped"),
    // Not a function's: a package's tests, and a folder whose name starts like a function's.
    file("packages/worker/test/unit/config.test.ts", "passed"),
    file("functions/processor-v2/test/handler.test.ts", "passed"),
  ],
};

describe("CI's test summary", () => {
  const functions = perFunction(report, root, ["fifo-worker", "processor", "tool-worker"]);

  it("counts each function's own tests, and zero for a function without tests", () => {
    expect(Object.fromEntries(functions)).toEqual({
      "fifo-worker": { files: 0, passed: 0, failed: 0, skipped: 0 },
      processor: { files: 2, passed: 2, failed: 1, skipped: 0 },
      "tool-worker": { files: 1, passed: 1, failed: 0, skipped: 1 },
    });
  });

  it("prints a line per function, then the totals as the last line", () => {
    expect(summaryLines(report, functions)).toEqual([
      "functions/fifo-worker  0 passed, 0 failed, 0 skipped (0 files)",
      "functions/processor    2 passed, 1 failed, 0 skipped (2 files)",
      "functions/tool-worker  1 passed, 0 failed, 1 skipped (1 files)",
      "tests: 5 passed, 1 failed, 1 skipped",
    ]);
  });

  it("writes the same as a markdown table for the job summary", () => {
    const table = summaryTable(report, functions);
    expect(table).toContain("| processor | 2 | 2 | 1 | 0 |");
    expect(table).toContain("| **all tests** | 5 | 5 | 1 | 1 |");
  });
});
