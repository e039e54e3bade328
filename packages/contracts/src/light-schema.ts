import { type SchemaIssue, SchemaViolationError } from "./decode-error.js";
import {
  boolean as booleanRule,
  DATE,
  discriminated,
  expected,
  literal as literalRule,
  object as objectRule,
  optional as optionalRule,
  plainObject as plainObjectRule,
  type Rule,
  type StringRule,
  string,
} from "./field-rules.js";

/**
 * The one way this repository declares and checks what comes from outside on a function's path: the
 * lifecycle events and jobs (lifecycle-event.ts, tool-call-job.ts), each function's environment, the
 * on-failure records and manual actions. Each schema is declared once, with these typed builders on the
 * field rules of field-rules.ts, and gives its TypeScript type (`Infer`). Why not zod: its module
 * evaluation was a large part of a function's cold start, and a copy of each schema in hand-written rules,
 * held to zod by parity tests, was the price (docs/benchmarks/cold-start.md). The builders take zod's
 * names and semantics, and their messages are zod's English ones (test/light-schema.test.ts checks them
 * against zod): a quarantine reason or a configuration error reads as before. `safeParse` has the shape of
 * zod's, so loadConfig (@mcp-pipeline/aws) takes either.
 */

/** One field: a rule that carries its output type, and parses a value alone (e.g. to read a default). */
export interface Field<T> extends Rule {
  parse(value: unknown): T;
  /** Type only: what the field gives. */
  readonly output?: T;
}

export type Issue = { readonly path: readonly string[]; readonly message: string };

export type SafeParse<T> =
  | { readonly success: true; readonly data: T }
  | {
      readonly success: false;
      readonly error: { readonly issues: readonly Issue[]; readonly message: string };
    };

/** A schema a value is parsed with: zod's `safeParse` and `parse`. */
export interface Schema<T> extends Field<T> {
  safeParse(input: unknown): SafeParse<T>;
}

/** An object schema, with its fields as zod's `shape`. */
export interface ObjectSchema<S extends Shape> extends Schema<Output<S>> {
  readonly shape: S;
}

type Shape = Readonly<Record<string, Field<unknown>>>;
type OutputOf<F> = F extends Field<infer T> ? T : never;
/** The type a schema or field gives: zod's `z.infer`. */
export type Infer<F extends Field<unknown>> = OutputOf<F>;
type Simplify<T> = { [K in keyof T]: T[K] } & {};
/** The object a shape gives; fields that may be undefined are optional keys, as zod infers them. */
export type Output<S extends Shape> = Simplify<
  { [K in keyof S as undefined extends OutputOf<S[K]> ? never : K]: OutputOf<S[K]> } & {
    [K in keyof S as undefined extends OutputOf<S[K]> ? K : never]?: OutputOf<S[K]>;
  }
>;

function run(rule: Rule, value: unknown): { value: unknown; issues: SchemaIssue[] } {
  const issues: SchemaIssue[] = [];
  const kept = rule(value, [], issues);
  return { value: kept, issues };
}

function field<T>(rule: Rule): Field<T> {
  return Object.assign(((value, path, issues) => rule(value, path, issues)) as Rule, {
    parse(value: unknown): T {
      const { value: kept, issues } = run(rule, value);
      if (issues.length > 0) throw new SchemaViolationError(issues);
      return kept as T;
    },
  });
}

/** field-rules paths are joined with "." ("(root)" for the value itself); no key here holds a dot. */
const pathOf = (issue: SchemaIssue): string[] => (issue.path === "(root)" ? [] : issue.path.split("."));

function schema<T>(rule: Rule): Schema<T> {
  return Object.assign(field<T>(rule), {
    safeParse(input: unknown): SafeParse<T> {
      const { value, issues } = run(rule, input);
      if (issues.length === 0) return { success: true, data: value as T };
      return {
        success: false,
        error: {
          issues: issues.map((issue) => ({ path: pathOf(issue), message: issue.message })),
          message: issues.map((i) => `${i.path}: ${i.message}`).join("; "),
        },
      };
    },
  });
}

/** A check's verdict with its issues as decode errors list them: dotted paths, `(root)` for the value itself. */
export type Checked<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly issues: readonly SchemaIssue[] };

/** Checks `value` against `schema`: what the decoders and encoders run on every record. */
export function check<T>(schema: Field<T>, value: unknown): Checked<T> {
  const { value: kept, issues } = run(schema, value);
  return issues.length === 0 ? { ok: true, value: kept as T } : { ok: false, issues };
}

/** As `z.object(shape)`: every field checked, unknown keys dropped, absent optional fields left out. */
export function object<S extends Shape>(shape: S): ObjectSchema<S> {
  return Object.assign(schema<Output<S>>(objectRule(shape)), { shape });
}

/** As `z.string()` with `.min`, `.max` and `.regex(pattern, message)`. */
export function text(rule: StringRule = {}): Field<string> {
  return field(string(rule));
}

/** As `z.literal(value)`. */
export function literal<T extends string | number>(value: T): Field<T> {
  return field(literalRule(value));
}

/** As `z.unknown()`: anything, kept as it is. */
export function unknown(): Field<unknown> {
  return field((value) => value);
}

/** As `z.boolean()`. */
export function boolean(): Field<boolean> {
  return field(booleanRule());
}

/** zod's `iso.datetime()`: UTC ("Z"), seconds required, any fraction of a second, calendar dates checked. */
const DATETIME = new RegExp(`^${DATE}T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$`);

/** As `z.iso.datetime()`. */
export function datetime(): Field<string> {
  return text({ pattern: DATETIME, patternMessage: "Invalid ISO datetime" });
}

/** zod's `iso.datetime({ precision: 3 })`: as DATETIME, with exactly three digits of milliseconds. */
const INSTANT = new RegExp(`^${DATE}T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d\\.\\d{3}(?:Z))$`);

/** As `z.iso.datetime({ precision: 3 })`: a UTC instant with milliseconds. */
export function instant(): Field<string> {
  return text({ pattern: INSTANT, patternMessage: "Invalid ISO datetime" });
}

/**
 * As `z.custom` of a plain JSON object, with `message` for anything else: the object is kept as it is, not
 * rebuilt, so that a key named `__proto__` stays a key (z.record would drop it).
 */
export function plainObject(message: string): Field<Record<string, unknown>> {
  return field(plainObjectRule(message));
}

/** As `.optional()`: absent stays absent; present must pass. */
export function optional<T>(inner: Field<T>): Field<T | undefined> {
  return field(optionalRule(inner));
}

/** As `.nullable()`: null passes as it is; anything else must pass. */
export function nullable<T>(inner: Field<T>): Field<T | null> {
  return field((value, path, issues) => (value === null ? null : inner(value, path, issues)));
}

/**
 * As `.default(value)`: an absent value becomes `value`, unchecked as zod leaves it, and (an object or
 * array) a shallow copy, so that no caller can change the default of the next parse.
 */
export function withDefault<T>(inner: Field<T>, value: T): Field<T> {
  const fresh = (): T =>
    Array.isArray(value)
      ? ([...value] as T)
      : typeof value === "object" && value !== null
        ? { ...value }
        : value;
  return field((input, path, issues) => (input === undefined ? fresh() : inner(input, path, issues)));
}

/**
 * As `.refine(check, message)`: a value that passes `inner` must also pass `check`, or the field's issue
 * is `message`. Not checked when `inner` found problems. zod skips a refinement only after a wrong type
 * and runs it after a failed format or range check, so `check` must accept every value of the right type
 * that `inner` refuses; then both give the same issues.
 */
export function refined<T>(inner: Field<T>, check: (value: T) => boolean, message: string): Field<T> {
  return field((value, path, issues) => {
    const before = issues.length;
    const kept = inner(value, path, issues) as T;
    if (issues.length === before && !check(kept))
      issues.push({ path: path.length === 0 ? "(root)" : path.join("."), message });
    return kept;
  });
}

/** As `z.discriminatedUnion(key, options)`, the options given by their discriminator value. */
export function oneOf<O extends Readonly<Record<string, ObjectSchema<Shape>>>>(
  key: string,
  options: O,
): Schema<{ [K in keyof O]: OutputOf<O[K]> }[keyof O]> {
  return schema(discriminated(key, options));
}

function bounds(
  value: number,
  path: readonly string[],
  issues: SchemaIssue[],
  limits: { min?: number; max?: number },
): void {
  const at = path.length === 0 ? "(root)" : path.join(".");
  if (limits.min !== undefined && !(value >= limits.min))
    issues.push({ path: at, message: `Too small: expected number to be >=${limits.min}` });
  if (limits.max !== undefined && !(value <= limits.max))
    issues.push({ path: at, message: `Too big: expected number to be <=${limits.max}` });
}

/** As `z.number().min(min).max(max)`: a finite number, fractions allowed. */
export function number(limits: { min?: number; max?: number } = {}): Field<number> {
  return field((value, path, issues) => {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      expected(issues, path, "number", value);
      return value;
    }
    bounds(value, path, issues, limits);
    return value;
  });
}

/**
 * As `z.number().int().min(min).max(max)`, or with `coerce` as `z.coerce.number()...`: what an
 * environment variable (always text) becomes through `Number(...)`, so "" is 0 and "1e3" is 1000, as with
 * zod.
 */
export function integer(limits: { min?: number; max?: number; coerce?: boolean }): Field<number> {
  return field((input, path, issues) => {
    const value = limits.coerce ? Number(input) : input;
    if (typeof value !== "number" || Number.isNaN(value) || !Number.isFinite(value)) {
      expected(issues, path, "number", value);
      return value;
    }
    if (!Number.isSafeInteger(value)) {
      const at = path.length === 0 ? "(root)" : path.join(".");
      if (!Number.isInteger(value)) {
        issues.push({ path: at, message: "Invalid input: expected int, received number" });
        return value;
      }
      issues.push({
        path: at,
        message:
          value > 0
            ? `Too big: expected int to be <=${Number.MAX_SAFE_INTEGER}`
            : `Too small: expected int to be >=${Number.MIN_SAFE_INTEGER}`,
      });
    }
    bounds(value, path, issues, limits);
    return value;
  });
}

const HTTP_URL = /^https?:\/\//i;

/**
 * As `z.url({ protocol: /^https?$/ })`: http(s) with "://", parsed by WHATWG URL; the value kept is the
 * text trimmed, without tabs and newlines, as zod keeps it.
 */
export function httpUrl(): Field<string> {
  return field((value, path, issues) => {
    if (typeof value !== "string") {
      expected(issues, path, "string", value);
      return value;
    }
    const trimmed = value.trim();
    const url = HTTP_URL.test(trimmed) ? URL.parse(trimmed) : null;
    if (url === null || !/^https?:$/.test(url.protocol)) {
      issues.push({ path: path.length === 0 ? "(root)" : path.join("."), message: "Invalid URL" });
      return value;
    }
    return trimmed.replace(/[\t\n\r]/g, "");
  });
}

/**
 * An SQS queue URL, checked by shape rather than as a WHATWG URL: emulators answer with hosts such as
 * sqs.us-east-1.127.0.0.1, which URL parsers refuse.
 */
export function sqsQueueUrl(): Field<string> {
  return text({
    pattern: /^https?:\/\/[^/\s]+\/\d{12}\/[A-Za-z0-9_-]{1,80}(\.fifo)?$/,
    patternMessage: "expected an SQS queue URL",
  });
}

/** A Kinesis stream name. */
export function streamName(): Field<string> {
  return text({ pattern: /^[a-zA-Z0-9_.-]{1,128}$/, patternMessage: "expected a Kinesis stream name" });
}
