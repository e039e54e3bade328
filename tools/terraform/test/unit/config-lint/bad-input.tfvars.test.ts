import { readFileSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  assertNoPrototypePollution,
  type BadInput,
  type BadInputExpectations,
  badDocuments,
  badInputTable,
  captureStreams,
  KINESIS_RECORD_MAX_BYTES,
} from "@mcp-pipeline/emulators/testing";
import { loadSettings, SettingsError, settingsFile } from "@mcp-pipeline/settings";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../../src/config-lint/index.js";

/**
 * tfvars files, the boundary of @mcp-pipeline/settings' loader and of `npm run lint:config -- --file`
 * (issue 13 §4): every bad file of the corpus is refused by both, naming the file and the field, with exit
 * status 2 and nothing on stdout; nothing is written, and the file is left as it was.
 */

const root = join(import.meta.dirname, "../../../../..");
const dev = JSON.parse(readFileSync(settingsFile(root, "dev"), "utf8")) as Record<string, unknown>;

const corpus = badDocuments({
  valid: dev,
  // No AWS limit applies to a settings file: 1 MiB stands for "far larger than any settings file".
  maxBytes: KINESIS_RECORD_MAX_BYTES,
  stringField: "name_prefix",
  numberField: "processor.esm.batch_size",
  objectField: "processor.esm",
});

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bad-tfvars-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

/** Every file under `dir`, with its bytes. */
async function snapshot(at: string): Promise<Record<string, string>> {
  const files = await readdir(at, { recursive: true, withFileTypes: true });
  const out: Record<string, string> = {};
  for (const f of files.filter((e) => e.isFile())) {
    const path = join(f.parentPath, f.name);
    out[path] = (await readFile(path)).toString("base64");
  }
  return out;
}

/** Refused by the loader and by lint:config, naming the file and `problem`; nothing written. */
async function expectRefused(input: BadInput<Uint8Array>, problem: string | RegExp) {
  const file = settingsFile(dir, "dev");
  await mkdir(join(file, ".."), { recursive: true });
  await writeFile(file, input.value);
  const before = await snapshot(dir);

  const error = await loadSettings(dir, "dev").catch((e: unknown) => e);
  assertNoPrototypePollution();
  expect(error).toBeInstanceOf(SettingsError);
  expect((error as SettingsError).file).toBe(file);
  expect((error as SettingsError).problems.join("\n")).toMatch(problem);

  const { result: code, out, err } = await captureStreams(() => main(["--file", file]));
  assertNoPrototypePollution();
  expect({ code, out }).toEqual({ code: 2, out: "" });
  expect(err).toContain(file);
  expect(err).toMatch(problem);
  expect(await snapshot(dir)).toEqual(before);
}

const at = (path: string) => new RegExp(`${path.replaceAll(".", "\\.")}\\b`);
const PREFIX = "name_prefix";
const BATCH = "processor.esm.batch_size";

const expectations: BadInputExpectations<Uint8Array> = {
  empty: (input) => expectRefused(input, input.name === "{}" ? at("environment") : /not JSON/),
  truncated: (input) =>
    expectRefused(input, input.name === "cut inside a multi-byte character" ? /not UTF-8/ : /not JSON/),
  oversized: (input) => expectRefused(input, at(PREFIX)),
  "wrong type": (input) => {
    const path = input.name.startsWith(PREFIX) ? PREFIX : input.name.startsWith(BATCH) ? BATCH : "";
    return expectRefused(input, path ? at(path) : /expected object/);
  },
  // Settings have no version field: a key of that name is one the schema does not know.
  "wrong version": (input) => expectRefused(input, /Unrecognized key: "version"/),
  "invalid UTF-8": (input) => expectRefused(input, /not UTF-8/),
  "deeply nested": (input) => {
    if (input.name.includes("arrays")) return expectRefused(input, /expected object/);
    if (input.name.endsWith(`in ${PREFIX}`)) return expectRefused(input, at(PREFIX));
    return expectRefused(input, /Unrecognized key: "nested"/);
  },
  "hostile values": (input) => {
    if (input.name === "every field under __proto__") return expectRefused(input, /__proto__/);
    if (input.name.startsWith("__proto__ and constructor")) return expectRefused(input, /Unrecognized key/);
    return expectRefused(input, input.name.startsWith(PREFIX) ? at(PREFIX) : at(BATCH));
  },
};

describe("tfvars files: every bad file is refused by the loader and lint:config, naming the field; nothing written", () => {
  it.each(badInputTable(corpus, expectations))("$label", ({ run }) => run());
});
