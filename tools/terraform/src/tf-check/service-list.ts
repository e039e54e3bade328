/**
 * .ci/aws-provider-services.txt, the AWS services of the hashicorp/aws build: read by the build's trim
 * (provider-trim.ts) and by tf:check's comparison with the build (provider-services.ts), so that both take
 * the same names from it.
 */

/** Where the list lives, as a reader of the repository finds it. */
export const SERVICE_LIST = ".ci/aws-provider-services.txt";

export class ServiceListError extends Error {
  override readonly name = "ServiceListError";
  constructor(
    readonly file: string,
    readonly line: number,
    readonly text: string,
  ) {
    super(
      `${file}:${line}: "${text}" is not a service package name (lower-case letters and digits, one a line, e.g. sqs)`,
    );
  }
}

/** The services of the list, sorted, without comments (`#` to the end of a line) or blank lines. */
export function parseServiceList(text: string, file = SERVICE_LIST): string[] {
  const services = new Set<string>();
  text.split("\n").forEach((line, index) => {
    const name = line.replace(/#.*/, "").trim();
    if (name === "") return;
    if (!/^[a-z0-9]+$/.test(name)) throw new ServiceListError(file, index + 1, name);
    services.add(name);
  });
  return [...services].sort();
}
