/**
 * Trims a scratch copy of the hashicorp/aws provider's source to the services of the list, in place, and
 * writes the build's manifest (provider-trim.ts says what and why). Called by .ci/aws-provider.sh on its
 * copy of the module, never on the Go module cache:
 *
 *   tsx tools/terraform/src/tf-check/provider-trim-cli.ts SOURCE_DIR SERVICES_FILE MANIFEST_OUT
 *
 * A bad list or an unknown service exits 1 before any file changes.
 */
import { readdir, readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import {
  AWSCLIENT_GEN,
  clientNamesIn,
  EmptyServiceListError,
  GeneratedLayoutError,
  keepServicePackages,
  keepUsedClientGetters,
  manifestJson,
  providerPackagesIn,
  requireServices,
  SERVICE_PACKAGE_GEN,
  SERVICE_PACKAGES_GEN,
  typeMap,
  UnknownServiceError,
} from "./provider-trim.ts";
import { parseServiceList, ServiceListError } from "./service-list.ts";

class UsageError extends Error {
  override readonly name = "UsageError";
}

const isGoSource = (name: string) => name.endsWith(".go") && !name.endsWith("_test.go");

async function isFile(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** Each service directory's service_package_gen.go, in directory order. */
async function servicePackageGens(src: string): Promise<[string, string][]> {
  const serviceDir = join(src, "internal", "service");
  const packages: [string, string][] = [];
  for (const service of (await readdir(serviceDir)).sort()) {
    const gen = join(serviceDir, service, SERVICE_PACKAGE_GEN);
    if (await isFile(gen)) packages.push([service, await readFile(gen, "utf8")]);
  }
  return packages;
}

/**
 * The provider's own packages that the trimmed build compiles: the root package's imports, followed.
 * Over-approximate: every non-test file counts, whatever its build tags.
 */
async function compiledPackages(src: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const todo = [""];
  for (let rel = todo.pop(); rel !== undefined; rel = todo.pop()) {
    if (seen.has(rel)) continue;
    seen.add(rel);
    for (const name of await readdir(join(src, rel)))
      if (isGoSource(name)) todo.push(...providerPackagesIn(await readFile(join(src, rel, name), "utf8")));
  }
  return seen;
}

/** Every `…Client` name in the compiled packages, but for the getters' own file. */
async function clientNamesUsed(src: string, getters: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (const rel of await compiledPackages(src))
    for (const name of await readdir(join(src, rel))) {
      const path = join(src, rel, name);
      if (isGoSource(name) && path !== getters)
        for (const client of clientNamesIn(await readFile(path, "utf8"))) names.add(client);
    }
  return names;
}

async function trim(src: string, servicesFile: string, manifestOut: string): Promise<void> {
  const services = requireServices(
    parseServiceList(await readFile(servicesFile, "utf8"), servicesFile),
    servicesFile,
  );
  const types = typeMap(await servicePackageGens(src));

  const packagesGen = join(src, SERVICE_PACKAGES_GEN);
  const packages = keepServicePackages(await readFile(packagesGen, "utf8"), services, packagesGen);
  await writeFile(packagesGen, packages);

  // After the list is trimmed: the getters kept are those the registered packages' closure names.
  const clientGen = join(src, AWSCLIENT_GEN);
  const used = await clientNamesUsed(src, clientGen);
  await writeFile(clientGen, keepUsedClientGetters(await readFile(clientGen, "utf8"), used, clientGen));

  await writeFile(manifestOut, manifestJson({ services, types }));
}

const args = process.argv.slice(2);
try {
  const [src, servicesFile, manifestOut] = args;
  if (args.length !== 3 || src === undefined || servicesFile === undefined || manifestOut === undefined)
    throw new UsageError("usage: provider-trim-cli.ts SOURCE_DIR SERVICES_FILE MANIFEST_OUT");
  await trim(src, servicesFile, manifestOut);
} catch (error) {
  if (
    !(
      error instanceof UsageError ||
      error instanceof ServiceListError ||
      error instanceof EmptyServiceListError ||
      error instanceof UnknownServiceError ||
      error instanceof GeneratedLayoutError
    )
  )
    throw error;
  console.error(`provider-trim: ${error.message}`);
  process.exitCode = 1;
}
