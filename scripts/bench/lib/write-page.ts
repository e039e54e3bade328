/** Writes a benchmark page and formats it: the repository's formatter owns Markdown layout (npm run lint checks it). */
import { execFile } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";

const biome = join(import.meta.dirname, "../../../node_modules/.bin/biome");

export async function writePage(file: string, text: string): Promise<void> {
  await writeFile(file, text);
  await formatPages([file]);
}

export async function formatPages(files: readonly string[]): Promise<void> {
  if (files.length > 0) await promisify(execFile)(biome, ["format", "--write", ...files]);
}
