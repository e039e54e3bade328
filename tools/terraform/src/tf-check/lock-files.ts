/**
 * The roots' dependency lock files (terraform/bootstrap, terraform/environments/{dev,prod}:
 * .terraform.lock.hcl), which every `terraform init` of the workflows reads with -lockfile=readonly, so
 * that no init takes a provider version nobody reviewed (docs/deploy.md, "Provider lock files").
 *
 * The check cannot init them as committed: the registry is not reachable here, and the mirror holds a
 * local build of hashicorp/aws (.ci/aws-provider.sh), whose version and checksums are not the registry's.
 * So it checks what it can (each root has one, every root locks the same version of hashicorp/aws, and
 * its constraints are the roots' own), then, in the workspace copy only, points each lock at the
 * mirror's build and inits with -lockfile=readonly: a provider a root requires that its lock file does
 * not list fails that init ("Provider dependency changes detected").
 */
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "@cdktf/hcl2json";

export const LOCK_FILE = ".terraform.lock.hcl";
export const AWS_PROVIDER = "registry.terraform.io/hashicorp/aws";

export interface ProviderLock {
  readonly version: string;
  readonly constraints: string | null;
  readonly hashes: readonly string[];
}

export class LockFileError extends Error {
  override readonly name = "LockFileError";
  constructor(
    readonly file: string,
    problem: string,
  ) {
    super(`${file}: ${problem}`);
  }
}

/** The provider blocks of a lock file, by provider address. */
export async function parseLockFile(file: string, text: string): Promise<Map<string, ProviderLock>> {
  let parsed: { provider?: Record<string, { version?: string; constraints?: string; hashes?: string[] }[]> };
  try {
    parsed = (await parse(file, text)) as typeof parsed;
  } catch (error) {
    throw new LockFileError(file, `not HCL: ${(error as Error).message}`);
  }
  const out = new Map<string, ProviderLock>();
  for (const [address, blocks] of Object.entries(parsed.provider ?? {})) {
    const block = blocks[0];
    if (block?.version === undefined) throw new LockFileError(file, `provider "${address}" has no version`);
    out.set(address, {
      version: block.version,
      constraints: block.constraints ?? null,
      hashes: block.hashes ?? [],
    });
  }
  return out;
}

/**
 * The constraints as `terraform init` records them: ">= 6.0, < 7.0" becomes ">= 6.0.0, < 7.0.0" (each
 * version given in full; "~>" keeps its precision, which is its meaning).
 */
export function normalisedConstraints(versionConstraint: string): string {
  return versionConstraint
    .split(",")
    .map((part) => {
      const m = /^\s*(>=|<=|>|<|=|!=|~>)?\s*(\d+(?:\.\d+){0,2})\s*$/.exec(part);
      if (m === null) return part.trim();
      const op = m[1] ?? "";
      const numbers = (m[2] as string).split(".");
      while (op !== "~>" && numbers.length < 3) numbers.push("0");
      return `${op === "" ? "" : `${op} `}${numbers.join(".")}`;
    })
    .join(", ");
}

export interface LockVerdict {
  /** The version every root locks. */
  readonly version: string;
  /** Roots whose lock lists no checksum, and how many each lists. */
  readonly hashes: Readonly<Record<string, number>>;
}

/**
 * Every root has a lock file that locks hashicorp/aws, all at one version, with the constraints the
 * roots declare. `roots` maps a root's name to its directory.
 */
export async function checkLockFiles(
  roots: Readonly<Record<string, string>>,
  versionConstraint: string,
): Promise<LockVerdict> {
  const versions = new Map<string, string>();
  const hashes: Record<string, number> = {};
  for (const [root, dir] of Object.entries(roots)) {
    const file = join(dir, LOCK_FILE);
    const text = await readFile(file, "utf8").catch((error: NodeJS.ErrnoException) => {
      if (error.code === "ENOENT")
        throw new LockFileError(
          file,
          'missing: every root commits its lock file (docs/deploy.md, "Provider lock files", says how to write it)',
        );
      throw error;
    });
    const lock = (await parseLockFile(file, text)).get(AWS_PROVIDER);
    if (lock === undefined) throw new LockFileError(file, `does not lock ${AWS_PROVIDER}`);
    const expected = normalisedConstraints(versionConstraint);
    if (lock.constraints !== expected)
      throw new LockFileError(file, `constraints "${lock.constraints}", but the roots require "${expected}"`);
    versions.set(root, lock.version);
    hashes[root] = lock.hashes.length;
  }
  const distinct = [...new Set(versions.values())];
  if (distinct.length !== 1)
    throw new LockFileError(
      LOCK_FILE,
      `the roots lock different versions of hashicorp/aws: ${[...versions].map(([r, v]) => `${r} ${v}`).join(", ")}`,
    );
  return { version: distinct[0] as string, hashes };
}

/** In the workspace copy: the lock points at the mirror's build (its version, no registry checksums). */
export async function pointLockAtMirror(
  dir: string,
  mirrorVersion: string,
  versionConstraint: string,
): Promise<void> {
  await writeFile(
    join(dir, LOCK_FILE),
    [
      "# Written by tools/terraform/src/tf-check in the workspace copy: the mirror's local build stands in for the",
      "# committed lock's registry release (its checksums are not the registry's).",
      `provider "${AWS_PROVIDER}" {`,
      `  version     = "${mirrorVersion}"`,
      `  constraints = "${normalisedConstraints(versionConstraint)}"`,
      "}",
      "",
    ].join("\n"),
  );
}
