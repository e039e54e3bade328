import { describe, expect, it } from "vitest";
import { type PagePart, type PartStatus, previousDates, renderIndex } from "../../src/lib/index-page.ts";

const parts: PagePart[] = [
  { name: "batch", page: "batch-engine.md", what: "the engine", command: "npm run bench:batch" },
  { name: "chaos", page: "chaos.md", what: "the chaos run", command: "npm run chaos -- --json" },
  { name: "cold-start", page: "cold-start.md", what: "bundles", command: "npm run bench:cold-start" },
];
const run = { date: "2026-12-01", command: "npm run bench", machine: "a machine", quick: false };

describe("the benchmarks index", () => {
  it("dates a part run now, keeps the earlier date of one that failed or was not run", () => {
    const statuses = new Map<string, PartStatus>([
      ["batch", { kind: "ok", seconds: 61, loadAtStart: 3.2 }],
      ["chaos", { kind: "not present" }],
      ["cold-start", { kind: "failed", seconds: 5, exitCode: 1, reason: "exit code 1" }],
    ]);
    const earlier = new Map([["cold-start.md", "2026-11-30"]]);
    const page = renderIndex(parts, statuses, earlier, run);
    expect(page).toContain(
      "| [batch-engine.md](batch-engine.md) | the engine | `npm run bench:batch` | 2026-12-01 |",
    );
    expect(page).toContain(
      "| [chaos.md](chaos.md) | the chaos run | `npm run chaos -- --json` | never | not present",
    );
    expect(page).toContain("| 2026-11-30 | **failed** (exit code 1)");
  });

  it("says how to run a part that runs only when named, and keeps its earlier date", () => {
    const scale: PagePart = {
      name: "chaos-scale",
      page: "chaos-scale.md",
      what: "the chaos run at scale",
      command: "npm run chaos -- --events 100000 --json",
      onlyWhenNamed: true,
    };
    const page = renderIndex([...parts, scale], new Map(), new Map([["chaos-scale.md", "2026-12-07"]]), run);
    expect(page).toContain("| 2026-12-07 | not run (runs only with `--only chaos-scale`) |");
    expect(page).toContain(
      "| [chaos.md](chaos.md) | the chaos run | `npm run chaos -- --json` | never | not run (--only) |",
    );
  });

  it("reads back the dates it wrote, also once the formatter has aligned the table", () => {
    const page = renderIndex(
      parts,
      new Map([["batch", { kind: "ok", seconds: 1, loadAtStart: 1 }]]),
      new Map(),
      {
        ...run,
        quick: true,
      },
    );
    const aligned = page.replace(/\| ([^|\n]+) \|/g, "|   $1    |");
    expect(previousDates(aligned)).toEqual(
      new Map([
        ["batch-engine.md", "2026-12-01 (quick)"],
        ["chaos.md", "never"],
        ["cold-start.md", "never"],
      ]),
    );
  });
});
