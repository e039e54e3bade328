/**
 * `npm run bench` options: `--only <part>[,<part>...]` (repeatable) and `--quick`. Parsing is a pure
 * function of the arguments and the known part names, so every bad argument has a clear message.
 */
import { parseArgs } from "node:util";

export interface BenchOptions {
  /** The parts to run, in the orchestrator's order; every part when `--only` is absent. */
  readonly only: readonly string[] | undefined;
  /** Fewer repeats and smaller workloads: checks that every part runs, not figures to publish. */
  readonly quick: boolean;
  readonly help: boolean;
}

export class BenchArgumentError extends Error {
  override readonly name = "BenchArgumentError";
  constructor(
    message: string,
    readonly argument: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export type ParsedArgs =
  | { readonly ok: true; readonly value: BenchOptions }
  | { readonly ok: false; readonly error: BenchArgumentError };

export function parseBenchArgs(argv: readonly string[], parts: readonly string[]): ParsedArgs {
  let values: { only?: string[]; quick?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        only: { type: "string", multiple: true },
        quick: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (cause) {
    const message = cause instanceof Error ? cause.message : String(cause);
    return { ok: false, error: new BenchArgumentError(message, undefined, { cause }) };
  }
  if (values.only === undefined) {
    return { ok: true, value: { only: undefined, quick: values.quick ?? false, help: values.help ?? false } };
  }
  const names = values.only.flatMap((v) => v.split(",")).map((v) => v.trim());
  for (const name of names) {
    if (name === "") {
      return { ok: false, error: new BenchArgumentError("--only takes part names, got an empty one", "") };
    }
    if (!parts.includes(name)) {
      return {
        ok: false,
        error: new BenchArgumentError(`unknown part "${name}" in --only; parts: ${parts.join(", ")}`, name),
      };
    }
  }
  return {
    ok: true,
    value: {
      only: parts.filter((p) => names.includes(p)),
      quick: values.quick ?? false,
      help: values.help ?? false,
    },
  };
}

/**
 * The parts a run takes, in the orchestrator's order: the ones named in `--only`, or without it every
 * part except those that run only when named.
 */
export function selectParts<P extends { readonly name: string; readonly onlyWhenNamed?: boolean }>(
  parts: readonly P[],
  only: readonly string[] | undefined,
): P[] {
  return parts.filter((p) => (only === undefined ? p.onlyWhenNamed !== true : only.includes(p.name)));
}
