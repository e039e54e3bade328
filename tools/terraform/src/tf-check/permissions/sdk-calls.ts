/**
 * The AWS API calls a function's bundle can make, read from what the build left (dist/<function>/meta.json,
 * esbuild's metafile of the zip's code): each SDK command module that contributes code to the bundle is an
 * operation the code can send, and each is attributed to the repository's modules in the bundle whose
 * source constructs it (`new XCommand(`), so that the check knows which resources it acts on
 * (code-targets.ts). A command no bundled module constructs must be one the SDK bundles but never sends
 * (NEVER_SENT), or it is reported.
 */
import { readFile } from "node:fs/promises";
import { join, relative, resolve } from "node:path";
import { DOCUMENT_COMMANDS, NEVER_SENT, SERVICE_OF_PACKAGE } from "./iam-actions.ts";

/** esbuild's metafile, the parts read here. */
export interface Metafile {
  readonly outputs: Readonly<
    Record<string, { readonly inputs: Readonly<Record<string, { readonly bytesInOutput: number }>> }>
  >;
}

/** One operation the code can send, as `service:Operation`, and the repository modules that send it. */
export interface SdkCall {
  readonly operation: string;
  /** Repository-relative paths (`packages/recovery/src/move-messages.ts`). */
  readonly modules: readonly string[];
}

export interface BundleCalls {
  readonly calls: readonly SdkCall[];
  /** Operations in the bundle that no module constructs and that are not NEVER_SENT: each is a finding. */
  readonly unattributed: readonly string[];
  /**
   * SDK packages whose client is in the bundle in a form whose calls cannot be read: its CommonJS build
   * (dist-cjs/index.js, every command in one file), or a client with no command module at all (an
   * aggregated client's methods, a command built elsewhere). Each is a finding: the check would
   * otherwise see no call of that service and pass whatever the role lacks.
   */
  readonly unreadable?: readonly string[];
}

const COMMAND_MODULE =
  /node_modules\/@aws-sdk\/((?:client-[a-z0-9-]+)|lib-dynamodb)\/dist-(?:es|cjs)\/commands\/(\w+)Command\.js$/;
const CONSTRUCTED = /\bnew\s+(\w+)Command\s*\(/g;
/** A module of an SDK package that can send: its client class (ES build), or the whole CommonJS build. */
const SENDING_MODULE =
  /node_modules\/@aws-sdk\/((?:client-[a-z0-9-]+)|lib-dynamodb)\/dist-(?:es\/(?:\w+Client|\w+DocumentClient)\.js|cjs\/index\.js)$/;

/** `service:Operation` for a command module of an SDK package, or undefined for another package's. */
function operationOf(pkg: string, command: string): string | undefined {
  const service = SERVICE_OF_PACKAGE[pkg];
  if (service === undefined) return `${pkg}:${command}`;
  return `${service}:${pkg === "lib-dynamodb" ? (DOCUMENT_COMMANDS[command] ?? command) : command}`;
}

/**
 * The calls of a bundle: `meta` is its metafile, `bundleDir` the directory its input paths are relative
 * to (functions/<function>), `root` the repository. Sources are read from the repository.
 */
export async function bundleCalls(meta: Metafile, bundleDir: string, root: string): Promise<BundleCalls> {
  const inputs = new Set<string>();
  for (const output of Object.values(meta.outputs))
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs))
      if (bytesInOutput > 0) inputs.add(input);

  const operations = new Set<string>();
  const ownModules: string[] = [];
  const withCommands = new Set<string>();
  const unreadable = new Set<string>();
  for (const input of inputs) {
    const command = COMMAND_MODULE.exec(input);
    const sending = SENDING_MODULE.exec(input);
    if (command) {
      withCommands.add(command[1] as string);
      const operation = operationOf(command[1] as string, command[2] as string);
      if (operation !== undefined) operations.add(operation);
    } else if (sending) {
      // Its CommonJS build holds every command in one module: which of them the code sends is unknowable.
      if (input.endsWith("/dist-cjs/index.js")) unreadable.add(`@aws-sdk/${sending[1]} (dist-cjs/index.js)`);
      else unreadable.add(`@aws-sdk/${sending[1]}`);
    } else if (!input.includes("node_modules/") && /\.[cm]?[jt]s$/.test(input)) {
      ownModules.push(input);
    }
  }
  // A client class with command modules beside it is read through them.
  for (const pkg of withCommands) unreadable.delete(`@aws-sdk/${pkg}`);

  const constructedBy = new Map<string, string[]>();
  for (const input of ownModules) {
    const path = resolve(bundleDir, input);
    const source = await readFile(path, "utf8");
    const module = relative(root, path);
    for (const [, name] of source.matchAll(CONSTRUCTED)) {
      const key = name as string;
      constructedBy.set(key, [...new Set([...(constructedBy.get(key) ?? []), module])]);
    }
  }

  const calls: SdkCall[] = [];
  const unattributed: string[] = [];
  for (const operation of [...operations].sort()) {
    const command = operation.slice(operation.indexOf(":") + 1);
    // A document command (lib-dynamodb's `Get`) is constructed under its own name.
    const names = [
      command,
      ...Object.entries(DOCUMENT_COMMANDS)
        .filter(([, op]) => op === command)
        .map(([doc]) => doc),
    ];
    const modules = [...new Set(names.flatMap((n) => constructedBy.get(n) ?? []))].sort();
    if (modules.length > 0) calls.push({ operation, modules });
    else if (!(operation in NEVER_SENT)) unattributed.push(operation);
  }
  return { calls, unattributed, unreadable: [...unreadable].sort() };
}

/** The calls of a function built into `dist/<name>/` from `functions/<name>/`. */
export async function functionCalls(root: string, distDir: string, name: string): Promise<BundleCalls> {
  const meta = JSON.parse(await readFile(join(distDir, name, "meta.json"), "utf8")) as Metafile;
  return bundleCalls(meta, join(root, "functions", name), root);
}
