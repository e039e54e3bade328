/**
 * Trims a scratch copy of the hashicorp/aws provider's source to the AWS services our Terraform uses
 * (.ci/aws-provider.sh; docs/deploy.md, "The provider"). The rewriting of the generated Go files, as pure
 * functions of their text; provider-trim-cli.ts reads and writes the files.
 *
 * 1. internal/provider/sdkv2/service_packages_gen.go, the generated list through which the provider
 *    registers every service package (each one's resources, data sources and API client factory), keeps
 *    only the packages of the service list. The packages it drops are neither compiled nor in the schema.
 * 2. internal/conns/awsclient_gen.go, the generated API client getters (one per service, each importing that
 *    service's AWS SDK for Go package), keeps only the getters that some compiled package still names:
 *    without this, all ~260 SDK service packages would still be downloaded and compiled.
 * 3. The manifest records the services built and every resource, data source, ephemeral resource and action
 *    type of the whole provider with its service package, so that `npm run tf:check` can name the service to
 *    add when the Terraform uses a type this build lacks (provider-services.ts reads it).
 *
 * A service package may still be compiled without being registered, because a registered one imports it
 * (lambda and meta import ec2, s3 imports s3control): its resources stay out of the schema, and a code path
 * that asks for its API client fails with "unknown service package". None of ours takes such a path
 * (lambda's needs replace_security_groups_on_destroy, s3's a directory bucket).
 *
 * The patterns match line starts the way Go's generated (gofmt'd, "\n"-ended) files have them: `(?<![^\n])`
 * is a start of line after "\n" only, where the `m` flag's `^` would also take "\r" and U+2028 for one.
 */
import type { ProviderManifest } from "./provider-services.ts";

export const MODULE = "github.com/hashicorp/terraform-provider-aws";
/** The generated files the trim rewrites, relative to the module's root. */
export const SERVICE_PACKAGES_GEN = "internal/provider/sdkv2/service_packages_gen.go";
export const AWSCLIENT_GEN = "internal/conns/awsclient_gen.go";
/** Each service package's generated registration, whose TypeNames the manifest maps to the package. */
export const SERVICE_PACKAGE_GEN = "service_package_gen.go";
/** Fewer getters than this in awsclient_gen.go (it has ~260): the getter pattern no longer fits the layout. */
export const MIN_CLIENT_GETTERS = 100;

export class EmptyServiceListError extends Error {
  override readonly name = "EmptyServiceListError";
  constructor(readonly file: string) {
    super(`${file} lists no service: add the provider's service packages the Terraform uses, one a line`);
  }
}

export class UnknownServiceError extends Error {
  override readonly name = "UnknownServiceError";
  constructor(readonly unknown: readonly string[]) {
    super(
      `not a service package that the provider registers: ${unknown.join(", ")} (the names are the directories of internal/service in its source, e.g. sqs, logs, meta)`,
    );
  }
}

/** A generated file no longer looks the way the patterns expect: the provider's generator has changed. */
export class GeneratedLayoutError extends Error {
  override readonly name = "GeneratedLayoutError";
  constructor(
    readonly file: string,
    readonly problem: string,
  ) {
    super(`${file}: ${problem}; the generated file's layout has changed`);
  }
}

/** The list's services must not be empty: a build without any would register no resource type at all. */
export function requireServices(services: readonly string[], file: string): readonly string[] {
  if (services.length === 0) throw new EmptyServiceListError(file);
  return services;
}

/** `text` as a pattern that matches it literally; valid with the `u` flag too. */
function literal(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

/** Go identifiers take Unicode letters and digits: a `\b` that counts them as word characters. */
const WORD = String.raw`[\p{L}\p{N}_]`;

/** The Terraform types (resource, data source, ephemeral, action) one service_package_gen.go registers. */
export function typeNamesIn(servicePackageGen: string): string[] {
  return [...servicePackageGen.matchAll(/TypeName:\s+"(aws_[a-z0-9_]+)"/g)].map((m) => m[1] as string);
}

/**
 * Every type of the provider -> its service package, sorted by type. `packages`: each service directory's
 * service_package_gen.go, in directory order; a type registered by two packages goes to the first.
 */
export function typeMap(
  packages: Iterable<readonly [service: string, servicePackageGen: string]>,
): Record<string, string> {
  const types = new Map<string, string>();
  for (const [service, text] of packages)
    for (const type of typeNamesIn(text)) if (!types.has(type)) types.set(type, service);
  return Object.fromEntries([...types].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** service_packages_gen.go with only the imports and registrations of `services`. */
export function keepServicePackages(text: string, services: readonly string[], file: string): string {
  const keep = new Set(services);
  const servicePath = `${literal(MODULE)}\\/internal\\/service\\/([a-z0-9]+)`;
  const available = new Set([...text.matchAll(new RegExp(`"${servicePath}"`, "g"))].map((m) => m[1]));
  const unknown = services.filter((s) => !available.has(s));
  if (unknown.length > 0) throw new UnknownServiceError(unknown);
  const imports = new RegExp(`(?<![^\\n])\\t"${servicePath}"\\n`, "g");
  const trimmed = text.replace(imports, (line, service: string) => (keep.has(service) ? line : ""));
  const registration = /(?<![^\n])\t\t([a-z0-9]+)\.ServicePackage\(ctx\),\n/g;
  const registered = new Set([...trimmed.matchAll(registration)].map((m) => m[1]));
  if (registered.size !== available.size || ![...registered].every((s) => available.has(s)))
    throw new GeneratedLayoutError(file, "its registrations do not match its imports");
  return trimmed.replace(registration, (line, service: string) => (keep.has(service) ? line : ""));
}

/**
 * The provider's own packages that a Go file names (as directories relative to the module's root): its
 * imports, and any other string naming one, so that following them over-approximates what is compiled.
 */
export function providerPackagesIn(goSource: string): string[] {
  const importer = new RegExp(`"${literal(MODULE)}\\/([A-Za-z0-9_./-]+)"`, "g");
  return [...goSource.matchAll(importer)].map((m) => m[1] as string);
}

/** The names ending in `Client` that a Go file uses: the client getters it may call. */
export function clientNamesIn(goSource: string): string[] {
  const name = new RegExp(`(?<!${WORD})[A-Za-z0-9_]+Client(?!${WORD})`, "gu");
  return [...goSource.matchAll(name)].map((m) => m[0]);
}

/**
 * awsclient_gen.go with only the getters whose names `used` has, and only the imports that the getters
 * left still name (an import by path, not aliased, named by its last element). `minGetters`: fewer getters
 * than this mean the pattern no longer matches the generated layout (the real file has ~260).
 */
export function keepUsedClientGetters(
  text: string,
  used: ReadonlySet<string>,
  file: string,
  minGetters = MIN_CLIENT_GETTERS,
): string {
  const getter =
    /(?<![^\n])func \(c \*AWSClient\) ([A-Za-z0-9_]+)\(ctx context\.Context\) [^\n]*\{\n[\s\S]*?(?<![^\n])\}\n\n?/g;
  const getters = [...text.matchAll(getter)].length;
  if (getters < minGetters)
    throw new GeneratedLayoutError(
      file,
      `${getters} client getters found, fewer than the ${minGetters} expected`,
    );
  const trimmed = text.replace(getter, (whole, name: string) => (used.has(name) ? whole : ""));
  const end = "\n)\n";
  const at = trimmed.indexOf(end);
  if (at === -1) throw new GeneratedLayoutError(file, "no import block");
  const header = trimmed.slice(0, at);
  const body = trimmed.slice(at + end.length);
  // An import stays while the body names its package (the path's last element) as `name.`.
  const named = (path: string): boolean =>
    new RegExp(`(?<!${WORD})${literal(path.slice(path.lastIndexOf("/") + 1))}\\.`, "u").test(body);
  const keptHeader = header.replace(/(?<![^\n])\t"([^"]+)"\n/g, (line, path: string) =>
    named(path) ? line : "",
  );
  return keptHeader + end + body;
}

/** The manifest as .ci/aws-provider.sh puts it beside the binary (provider-services.ts parses it). */
export function manifestJson(manifest: ProviderManifest): string {
  return `${JSON.stringify({ services: manifest.services, types: manifest.types }, null, 1)}\n`;
}
