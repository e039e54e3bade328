// The workflows' check of the downloaded artifacts against dist/manifest.json (scripts/ci/verify-artifacts.mjs).
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";

const script = join(import.meta.dirname, "../../ci/verify-artifacts.mjs");
let dir = "";
afterEach(() => rm(dir, { recursive: true, force: true }));

async function manifest(bytes: string, claimed?: string): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "verify-artifacts-"));
  const zip = join(dir, "processor.zip");
  await writeFile(zip, bytes);
  const sha256 = claimed ?? createHash("sha256").update(bytes).digest("base64");
  const file = join(dir, "manifest.json");
  await writeFile(
    file,
    JSON.stringify({ formatVersion: 1, artifacts: { processor: { path: zip, sha256 } } }),
  );
  return file;
}

const run = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: "utf8" });

describe("verify-artifacts", () => {
  it("passes the artifacts the manifest names, printing each one's SHA-256", async () => {
    const result = run(await manifest("zip bytes"));
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^processor \S+=\n$/);
  });

  it("fails an artifact that is not the one built, naming it and both hashes", async () => {
    const result = run(await manifest("other bytes", "AAAA"));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^processor: sha256 \S+, the manifest says AAAA/);
  });

  it("refuses a command line without the manifest", () => {
    const result = run();
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(/usage/);
  });
});
