import { mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { inflateRawSync } from "node:zlib";

/** Reads the entries of a zip we wrote: stored or deflated, no data descriptors needed. */
export function unzip(
  zip: Buffer,
): Map<string, { content: Buffer; mode: number; dosTime: number; dosDate: number }> {
  const entries = new Map<string, { content: Buffer; mode: number; dosTime: number; dosDate: number }>();
  const eocd = zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  let offset = zip.readUInt32LE(eocd + 16);
  for (let i = 0; i < zip.readUInt16LE(eocd + 10); i++) {
    const method = zip.readUInt16LE(offset + 10);
    const dosTime = zip.readUInt16LE(offset + 12);
    const dosDate = zip.readUInt16LE(offset + 14);
    const compressed = zip.readUInt32LE(offset + 20);
    const nameLength = zip.readUInt16LE(offset + 28);
    const extraLength = zip.readUInt16LE(offset + 30);
    const mode = zip.readUInt32LE(offset + 38) >>> 16;
    const local = zip.readUInt32LE(offset + 42);
    const name = zip.toString("utf8", offset + 46, offset + 46 + nameLength);
    const dataStart = local + 30 + zip.readUInt16LE(local + 26) + zip.readUInt16LE(local + 28);
    const data = zip.subarray(dataStart, dataStart + compressed);
    entries.set(name, {
      content: method === 8 ? inflateRawSync(data) : Buffer.from(data),
      mode,
      dosTime,
      dosDate,
    });
    offset += 46 + nameLength + extraLength + zip.readUInt16LE(offset + 32);
  }
  return entries;
}

/** A deployment package that is not a zip (no end-of-central-directory record, or entries past its end). */
export class NotAZipError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "NotAZipError";
  }
}

/**
 * Writes every entry of a function's zip into `dir`, as Lambda unpacks the deployment package (the
 * function's handler string then names a module in it); returns the entries' names.
 */
export async function unpackTo(zip: Buffer, dir: string): Promise<string[]> {
  let entries: ReturnType<typeof unzip>;
  try {
    if (zip.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06])) === -1)
      throw new Error("no end-of-central-directory record");
    entries = unzip(zip);
  } catch (error) {
    throw new NotAZipError(`not a zip file: ${(error as Error).message}`, { cause: error });
  }
  for (const [name, { content }] of entries) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), content);
  }
  return [...entries.keys()];
}

/**
 * Writes every entry of a function's zip into `dir` (unpackTo) and returns the path of its index.mjs, for
 * callers that import the bundle's module themselves.
 */
export async function unzipTo(zip: Buffer, dir: string): Promise<string> {
  const names = await unpackTo(zip, dir);
  if (!names.includes("index.mjs"))
    throw new Error(`the zip has no index.mjs (entries: ${names.join(", ")})`);
  return join(dir, "index.mjs");
}
