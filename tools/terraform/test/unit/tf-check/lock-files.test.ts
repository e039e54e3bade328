// The roots' dependency lock files as tf:check reads them: the committed ones, then broken copies.
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import { afterEach, describe, expect, it } from "vitest";
import {
  AWS_PROVIDER,
  checkLockFiles,
  LOCK_FILE,
  LockFileError,
  normalisedConstraints,
  parseLockFile,
  pointLockAtMirror,
} from "../../../src/tf-check/lock-files.ts";

const ROOTS = {
  bootstrap: join(TERRAFORM_ROOT, "bootstrap"),
  dev: join(TERRAFORM_ROOT, "environments", "dev"),
  prod: join(TERRAFORM_ROOT, "environments", "prod"),
};
const CONSTRAINT = ">= 6.0, < 7.0";

const lock = (version: string, constraints = ">= 6.0.0, < 7.0.0", address = AWS_PROVIDER) =>
  `provider "${address}" {\n  version     = "${version}"\n  constraints = "${constraints}"\n}\n`;

let dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
  dirs = [];
});

async function roots(files: Record<string, string | null>): Promise<Record<string, string>> {
  const base = await mkdtemp(join(tmpdir(), "lock-files-"));
  dirs.push(base);
  const out: Record<string, string> = {};
  for (const [root, text] of Object.entries(files)) {
    const dir = join(base, root);
    await mkdir(dir);
    if (text !== null) await writeFile(join(dir, LOCK_FILE), text);
    out[root] = dir;
  }
  return out;
}

describe("the committed lock files", () => {
  it("every root locks the same hashicorp/aws with the roots' constraints", async () => {
    const verdict = await checkLockFiles(ROOTS, CONSTRAINT);
    expect(verdict.version).toBe("6.47.0");
    expect(Object.keys(verdict.hashes).sort()).toEqual(["bootstrap", "dev", "prod"]);
  });
});

describe("checkLockFiles refuses", () => {
  it("a root without its lock file, naming the file", async () => {
    const r = await roots({ dev: lock("6.47.0"), prod: null });
    await expect(checkLockFiles(r, CONSTRAINT)).rejects.toThrow(/prod\/\.terraform\.lock\.hcl: missing/);
  });

  it("roots that lock different versions", async () => {
    const r = await roots({ dev: lock("6.47.0"), prod: lock("6.48.0") });
    await expect(checkLockFiles(r, CONSTRAINT)).rejects.toThrow(
      /different versions of hashicorp\/aws: dev 6.47.0, prod 6.48.0/,
    );
  });

  it("constraints that are not the roots' (a lock written before versions.tf changed)", async () => {
    const r = await roots({ dev: lock("6.47.0", ">= 5.0.0") });
    await expect(checkLockFiles(r, CONSTRAINT)).rejects.toThrow(LockFileError);
  });

  it("a lock that does not lock hashicorp/aws, and one that is not HCL", async () => {
    const r = await roots({ dev: lock("3.6.0", ">= 3.0.0", "registry.terraform.io/hashicorp/random") });
    await expect(checkLockFiles(r, CONSTRAINT)).rejects.toThrow(
      /does not lock registry.terraform.io\/hashicorp\/aws/,
    );
    await expect(parseLockFile("x.hcl", 'provider "a" {')).rejects.toThrow(/not HCL/);
  });
});

describe("pointLockAtMirror", () => {
  it("writes the mirror's version, the roots' constraints and no checksum", async () => {
    const r = await roots({ dev: lock("6.47.0") });
    await pointLockAtMirror(r.dev as string, "6.47.1", CONSTRAINT);
    const parsed = await parseLockFile("x", await readFile(join(r.dev as string, LOCK_FILE), "utf8"));
    expect(parsed.get(AWS_PROVIDER)).toEqual({
      version: "6.47.1",
      constraints: ">= 6.0.0, < 7.0.0",
      hashes: [],
    });
  });

  it("normalises constraints as terraform init records them", () => {
    expect(normalisedConstraints(">= 6.0, < 7.0")).toBe(">= 6.0.0, < 7.0.0");
    expect(normalisedConstraints("~> 6.47")).toBe("~> 6.47");
  });
});
