/** Writes a benchmark page and formats it: the repository's formatter owns Markdown layout (npm run lint checks it). */
import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const biome = join(import.meta.dirname, "../../../../node_modules/.bin/biome");

export async function writePage(file: string, text: string): Promise<void> {
  await writeFile(file, text);
  await formatPages([file]);
}

export async function formatPages(files: readonly string[]): Promise<void> {
  if (files.length > 0) await promisify(execFile)(biome, ["format", "--write", ...files]);
}

/**
 * Writes `generated` (which starts with `begin` and ends with `end`) in place of the page's part between
 * those lines, keeping the analysis written around it by hand; a page without them gets it at its end, a
 * missing page is created with `title`. Then formats the page.
 */
export async function writeGeneratedPart(
  file: string,
  marks: { readonly begin: string; readonly end: string; readonly title: string },
  generated: string,
): Promise<void> {
  const current = await readFile(file, "utf8").catch(
    () => `# ${marks.title}\n\n${marks.begin}\n${marks.end}\n`,
  );
  const start = current.indexOf(marks.begin);
  const end = current.indexOf(marks.end);
  const doc =
    start === -1 || end === -1
      ? `${current.trimEnd()}\n\n${generated}\n`
      : `${current.slice(0, start)}${generated}${current.slice(end + marks.end.length)}`;
  await writePage(file, doc);
}
