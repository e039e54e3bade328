import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ZipFile } from "yazl";

export interface ZipEntry {
  /** Path inside the archive, forward slashes. */
  readonly name: string;
  readonly content: Buffer;
}

/**
 * DOS timestamps are written from *local* date fields, so a fixed instant would give different bytes
 * in different time zones; a date built from local fields is the same everywhere. 1980-01-01 is the
 * earliest DOS date.
 */
const FIXED_DATE = new Date(1980, 0, 1, 0, 0, 0);
/** Regular file, rw-r--r--: readable by the Lambda runtime user whatever the build machine's umask. */
const FILE_MODE = 0o100644;

/**
 * The same entries always give byte-identical archives: entries sorted by name, fixed timestamp
 * without the extended-timestamp field, fixed mode, and deflate from the bundled zlib.
 */
export function deterministicZip(entries: readonly ZipEntry[]): Promise<Buffer> {
  const zip = new ZipFile();
  for (const entry of [...entries].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    zip.addBuffer(entry.content, entry.name, {
      mtime: FIXED_DATE,
      mode: FILE_MODE,
      compress: true,
      forceDosTimestamp: true,
    });
  }
  zip.end();
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    zip.outputStream.on("data", (chunk: Buffer) => chunks.push(chunk));
    zip.outputStream.on("error", reject);
    zip.outputStream.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

/** Base64 SHA-256 of a file: the value Terraform's filebase64sha256() returns for source_code_hash. */
export async function base64Sha256(path: string): Promise<string> {
  return createHash("sha256")
    .update(await readFile(path))
    .digest("base64");
}
