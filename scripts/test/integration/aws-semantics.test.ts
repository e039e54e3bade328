/**
 * "§n" anywhere in the repository means a section of docs/aws-semantics.md (its "How to cite this page").
 * Every citation in a .ts, .tf, .hcl or .md file must name a section the page has; a quoted label after
 * it (`§1.4 "Checkpoint rule"`) must appear in that section, and `§9.1 item 6` must be an item of its
 * numbered list. No file may name the document the page replaced, which is not in the repository.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");
const PAGE = "docs/aws-semantics.md";
/** The document §n used to refer to; spelt in two parts so that this file does not cite it. */
const OLD_NAME = ["esm", "semantics.md"].join("-");
const CITING_FILE = /\.(ts|tf|hcl|md)$/;
/** Generated, installed or cached trees: not the project's text. */
const SKIPPED_DIRECTORIES = new Set([
  ".git",
  "node_modules",
  "dist",
  ".turbo",
  "coverage",
  ".tmp",
  ".terraform",
]);

interface Section {
  readonly number: string;
  /** The section's text with its subsections, without Markdown emphasis, whitespace collapsed. */
  readonly text: string;
  /** The numbers of its top-level numbered list items. */
  readonly items: ReadonlySet<number>;
}

/** The page's sections, by number, from headings `## §1 ...` to `#### §1.2.3 ...`. */
function sectionsOf(page: string): ReadonlyMap<string, Section> {
  const headings = [...page.matchAll(/^#{2,4} §(\d+(?:\.\d+)*) /gm)].map((m) => ({
    number: m[1] as string,
    start: m.index,
  }));
  const sections = new Map<string, Section>();
  for (const [i, heading] of headings.entries()) {
    const next = headings.slice(i + 1).find((h) => !h.number.startsWith(`${heading.number}.`));
    const body = page.slice(heading.start, next?.start ?? page.length);
    sections.set(heading.number, {
      number: heading.number,
      text: body.replace(/[*`]/g, "").replace(/\s+/g, " ").toLowerCase(),
      items: new Set([...body.matchAll(/^(\d+)\. /gm)].map((m) => Number(m[1]))),
    });
  }
  return sections;
}

interface Citation {
  readonly file: string;
  readonly line: number;
  /** As written, e.g. `§1.4`, `§1-3`. */
  readonly text: string;
  readonly sections: readonly string[];
  readonly label?: string;
  readonly item?: number;
}

/** Every `§n` in a file's text, with the range, quoted label or item that follows it. */
function citationsIn(file: string, content: string): Citation[] {
  const citations: Citation[] = [];
  for (const m of content.matchAll(/§(\d+(?:\.\d+)*)(?:[-–](\d+(?:\.\d+)*))?/g)) {
    const after = content.slice(m.index + m[0].length, m.index + m[0].length + 120);
    const label = /^\s+["'“‘]([^"'”’\n]+)["'”’]/.exec(after)?.[1];
    const item = /^\s+item\s+(\d+)/.exec(after)?.[1];
    citations.push({
      file,
      line: content.slice(0, m.index).split("\n").length,
      text: m[0],
      sections: m[2] === undefined ? [m[1] as string] : [m[1] as string, m[2]],
      ...(label === undefined ? {} : { label }),
      ...(item === undefined ? {} : { item: Number(item) }),
    });
  }
  return citations;
}

/** What is wrong with a citation, or null when the page has what it names. */
function problemOf(citation: Citation, sections: ReadonlyMap<string, Section>): string | null {
  const missing = citation.sections.filter((n) => !sections.has(n));
  if (missing.length > 0) return `${PAGE} has no §${missing.join(", §")}`;
  const section = sections.get(citation.sections[0] as string) as Section;
  if (
    citation.label !== undefined &&
    !section.text.includes(citation.label.replace(/\s+/g, " ").toLowerCase())
  )
    return `§${section.number} does not say "${citation.label}"`;
  if (citation.item !== undefined && !section.items.has(citation.item))
    return `§${section.number} has no item ${citation.item}`;
  return null;
}

function citingFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED_DIRECTORIES.has(entry.name)) files.push(...citingFiles(join(dir, entry.name)));
    } else if (CITING_FILE.test(entry.name)) files.push(join(dir, entry.name));
  }
  return files;
}

const page = readFileSync(join(root, PAGE), "utf8");
const sections = sectionsOf(page);
/** This file's own examples of wrong citations (below) are not citations. */
const THIS_FILE = relative(root, import.meta.filename);
const files = citingFiles(root)
  .map((path) => ({ file: relative(root, path), content: readFileSync(path, "utf8") }))
  .filter(({ file }) => file !== THIS_FILE);
const citations = files.flatMap(({ file, content }) => citationsIn(file, content));

describe(`citations of ${PAGE}`, () => {
  it("the page has every chapter the code cites, each under a '§n' heading", () => {
    for (const chapter of ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"])
      expect(sections.has(chapter)).toBe(true);
    expect(sections.get("9.1")?.items.has(12)).toBe(true);
  });

  it("every §n in a .ts, .tf, .hcl or .md file names a section, label and item the page has", () => {
    // The repository cites the page a few hundred times; far fewer means the scan missed files.
    expect(citations.length).toBeGreaterThan(200);
    const wrong = citations
      .map((c) => ({ at: `${c.file}:${c.line} ${c.text}`, problem: problemOf(c, sections) }))
      .filter((c) => c.problem !== null);
    expect(wrong).toEqual([]);
  });

  it("no file names the document the page replaced", () => {
    const naming = files.filter(({ content }) => content.includes(OLD_NAME)).map(({ file }) => file);
    expect(naming).toEqual([]);
  });

  it("the check reports a missing section, a missing label, a missing item and both ends of a range", () => {
    const cite = (text: string) => citationsIn("example.ts", text)[0] as Citation;
    expect(problemOf(cite("(§1.99)"), sections)).toBe(`${PAGE} has no §1.99`);
    expect(problemOf(cite("§1.4 'Checkpoint rule'"), sections)).toBeNull();
    expect(problemOf(cite('§1.4 "Rule nobody wrote"'), sections)).toBe(
      '§1.4 does not say "Rule nobody wrote"',
    );
    expect(problemOf(cite("§9.1 item 6"), sections)).toBeNull();
    expect(problemOf(cite("§9.2 item 40"), sections)).toBe("§9.2 has no item 40");
    expect(cite("§2.2–2.3").sections).toEqual(["2.2", "2.3"]);
    expect(problemOf(cite("§1-12"), sections)).toBe(`${PAGE} has no §12`);
  });
});
