/**
 * The hashicorp/aws build in the mirror has only the AWS services that .ci/aws-provider-services.txt lists
 * (.ci/aws-provider.sh; docs/deploy.md, "The provider"). Terraform refuses a type of any other service with
 * "The provider hashicorp/aws does not support resource type", which does not say that the build, not the
 * Terraform, is short of something. This check names the service to add instead, before any root runs.
 *
 * The build writes beside the binary a manifest (aws-provider-services.json): the services it has, and every
 * type of the whole provider with its service package, read from the provider's generated source.
 */
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { parseServiceList, SERVICE_LIST } from "./service-list.ts";

/** The manifest's name in the mirror directory (.ci/aws-provider.sh writes it). */
export const MANIFEST = "aws-provider-services.json";

export class ManifestError extends Error {
  override readonly name = "ManifestError";
  constructor(
    readonly file: string,
    readonly problem: string,
    options?: { cause?: unknown },
  ) {
    super(`${file}: ${problem}; rebuild it with .ci/aws-provider.sh`, options);
  }
}

export interface ProviderManifest {
  /** The service packages the build registers. */
  readonly services: readonly string[];
  /** Every type of the whole provider (resource, data source, ephemeral resource, action) -> its service. */
  readonly types: Readonly<Record<string, string>>;
}

export function parseManifest(text: string, file: string): ProviderManifest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(file, "not JSON", { cause: error });
  }
  const record = value as { services?: unknown; types?: unknown } | null;
  const services = record?.services;
  const types = record?.types;
  if (!Array.isArray(services) || !services.every((s) => typeof s === "string"))
    throw new ManifestError(file, '"services" is not a list of service names');
  if (
    typeof types !== "object" ||
    types === null ||
    Array.isArray(types) ||
    !Object.values(types).every((s) => typeof s === "string")
  )
    throw new ManifestError(file, '"types" is not an object of type names to service names');
  return { services, types: types as Record<string, string> };
}

/**
 * The hashicorp/aws types a Terraform file names: `resource`, `data`, `ephemeral`, `action` and `list`
 * blocks, and a test file's `mock_resource` and `mock_data` (a mock provider still takes its schema from
 * the real one). Lines starting with `#` or `//` are comments and do not match.
 */
export function typesIn(text: string): string[] {
  const pattern =
    /^[ \t]*(?:resource|data|ephemeral|action|list|mock_resource|mock_data)[ \t]+"(aws_[a-z0-9_]+)"/gm;
  return [...new Set([...text.matchAll(pattern)].map((m) => m[1] as string))].sort();
}

export interface MissingType {
  readonly type: string;
  /** The service package with the type; null when no service of the provider has it (a misspelling). */
  readonly service: string | null;
  readonly files: readonly string[];
}

export type ServicesVerdict =
  | { readonly kind: "ok"; readonly services: readonly string[]; readonly types: number }
  | { readonly kind: "stale-build"; readonly built: readonly string[]; readonly listed: readonly string[] }
  | { readonly kind: "missing"; readonly missing: readonly MissingType[] };

/** `used`: each type the Terraform names, with the files naming it. */
export function checkServices(
  used: ReadonlyMap<string, readonly string[]>,
  listed: readonly string[],
  manifest: ProviderManifest,
): ServicesVerdict {
  const built = [...manifest.services].sort();
  if (built.join(" ") !== [...listed].sort().join(" ")) return { kind: "stale-build", built, listed };
  const missing: MissingType[] = [];
  for (const [type, files] of [...used].sort(([a], [b]) => a.localeCompare(b))) {
    const service = manifest.types[type] ?? null;
    if (service === null || !built.includes(service)) missing.push({ type, service, files });
  }
  if (missing.length > 0) return { kind: "missing", missing };
  return { kind: "ok", services: built, types: used.size };
}

/** What the reader does next, or what was checked. */
export function verdictMessage(verdict: ServicesVerdict): string {
  switch (verdict.kind) {
    case "ok":
      return `every hashicorp/aws type of the Terraform (${verdict.types}) is in the build's services: ${verdict.services.join(", ")}`;
    case "stale-build":
      return [
        `the provider in the mirror was built with other services than ${SERVICE_LIST} lists:`,
        `  built:  ${verdict.built.join(" ")}`,
        `  listed: ${verdict.listed.join(" ")}`,
        "run .ci/aws-provider.sh to build it again (its cache key includes the list), then pass the mirror it prints",
      ].join("\n");
    case "missing": {
      const lines = verdict.missing.map((m) =>
        m.service === null
          ? `  ${m.type} (${m.files.join(", ")}): no service of hashicorp/aws has this type; check its spelling`
          : `  ${m.type} (${m.files.join(", ")}): service "${m.service}" is not in the build`,
      );
      const services = [...new Set(verdict.missing.flatMap((m) => (m.service === null ? [] : [m.service])))];
      const add =
        services.length > 0
          ? [
              `add ${services.map((s) => `"${s}"`).join(", ")} to ${SERVICE_LIST} (one a line) and run .ci/aws-provider.sh to build the provider with it`,
            ]
          : [];
      return ["the Terraform uses hashicorp/aws types that the provider build lacks:", ...lines, ...add].join(
        "\n",
      );
    }
  }
}

/** The Terraform the check runs: terraform/ (roots, modules, examples, tests) and the check's fixtures. */
async function terraformFiles(repositoryRoot: string): Promise<string[]> {
  const files: string[] = [];
  for (const dir of ["terraform", join("tools/terraform/src/tf-check/fixtures")])
    for (const f of await readdir(join(repositoryRoot, dir), { recursive: true }))
      if (/\.(tf|tftest\.hcl)$/.test(f) && !/(^|[/\\])\.terraform[/\\]/.test(f))
        files.push(join(repositoryRoot, dir, f));
  return files.sort();
}

/** Reads the list, the mirror's manifest and the Terraform; null when the mirror has no manifest. */
export async function providerServices(
  repositoryRoot: string,
  mirrorDir: string,
): Promise<ServicesVerdict | null> {
  const manifestFile = join(mirrorDir, MANIFEST);
  const manifestText = await readFile(manifestFile, "utf8").catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  });
  if (manifestText === null) return null;
  const manifest = parseManifest(manifestText, manifestFile);
  const listed = parseServiceList(await readFile(join(repositoryRoot, SERVICE_LIST), "utf8"));
  const used = new Map<string, string[]>();
  for (const file of await terraformFiles(repositoryRoot))
    for (const type of typesIn(await readFile(file, "utf8")))
      used.set(type, [...(used.get(type) ?? []), relative(repositoryRoot, file)]);
  return checkServices(used, listed, manifest);
}
