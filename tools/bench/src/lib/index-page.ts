/**
 * docs/benchmarks/README.md: one row per benchmark page, with the command that regenerates it and when
 * it last was. A part not run this time (`--only`, missing, failed) keeps the date of its previous row,
 * read back from the page being replaced.
 */

export interface PagePart {
  readonly name: string;
  /** File name under docs/benchmarks/. */
  readonly page: string;
  readonly what: string;
  /** The command that regenerates the page on its own. */
  readonly command: string;
  /**
   * Runs only when named in `--only`: a part that takes most of an hour (the chaos run at the
   * acceptance's scale) would otherwise make every `npm run bench` that long.
   */
  readonly onlyWhenNamed?: boolean;
}

export type PartStatus =
  | { readonly kind: "ok"; readonly seconds: number; readonly loadAtStart: number }
  | {
      readonly kind: "failed";
      readonly seconds: number;
      readonly exitCode: number | null;
      readonly reason: string;
    }
  | { readonly kind: "not present" }
  | { readonly kind: "not selected" }
  | { readonly kind: "only when named"; readonly name: string };

/** The "last regenerated" cell of each page's row in an earlier index, by page file name. */
export function previousDates(index: string): Map<string, string> {
  const dates = new Map<string, string>();
  for (const line of index.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const page = /^\[[^\]]+\]\(([^)]+)\)$/.exec(cells[1] ?? "")?.[1];
    const date = cells[4];
    if (page && date !== undefined && date !== "") dates.set(page, date);
  }
  return dates;
}

const describe = (s: PartStatus): string => {
  switch (s.kind) {
    case "ok":
      return `regenerated in ${s.seconds.toFixed(0)} s (load average ${s.loadAtStart.toFixed(1)} at its start)`;
    case "failed":
      return `**failed** (${s.reason}) after ${s.seconds.toFixed(0)} s`;
    case "not present":
      return "not present in this tree";
    case "not selected":
      return "not run (--only)";
    case "only when named":
      return `not run (runs only with \`--only ${s.name}\`)`;
  }
};

export interface IndexRun {
  /** ISO date of this run. */
  readonly date: string;
  readonly command: string;
  readonly machine: string;
  readonly quick: boolean;
}

export function renderIndex(
  parts: readonly PagePart[],
  statuses: ReadonlyMap<string, PartStatus>,
  previous: ReadonlyMap<string, string>,
  run: IndexRun,
): string {
  const rows = parts.map((part) => {
    const status: PartStatus =
      statuses.get(part.name) ??
      (part.onlyWhenNamed ? { kind: "only when named", name: part.name } : { kind: "not selected" });
    const date =
      status.kind === "ok"
        ? `${run.date}${run.quick ? " (quick)" : ""}`
        : (previous.get(part.page) ?? "never");
    return `| [${part.page}](${part.page}) | ${part.what} | \`${part.command}\` | ${date} | ${describe(status)} |`;
  });
  return `# Benchmarks

\`npm run bench\` (tools/bench/src/all.ts) regenerates every page below, one part after another, each in its
own process: a part that fails is reported and the others still run. \`npm run bench -- --only <part>\`
runs some (comma-separated, or the option repeated); a part marked "runs only with \`--only\`" takes most of an
hour and runs only when named. \`--quick\` runs each part small (fewer repeats: a check
that it runs, not figures to quote). Each page names the command that produced it and the machine: Node
version, cores, load average at the start, date. Figures are medians of repeated runs with the spread
(min-max); comparisons are ratios from the same run.

Last run: \`${run.command}\`, ${run.machine}.

| page | what it measures | command | last regenerated | last \`npm run bench\` |
|---|---|---|---|---|
${rows.join("\n")}
`;
}
