import type { SchemaIssue } from "./decode-error.js";

/**
 * The untyped rules under the typed builders of light-schema.ts: each checks a value at a path, pushes
 * what is wrong, and returns the value to keep. Semantics and messages are zod's English ones
 * (test/light-schema.test.ts checks the builders against zod).
 */

/** Checks `value` at `path`; pushes what is wrong and returns the value to keep (objects are rebuilt). */
export type Rule = (value: unknown, path: readonly string[], issues: SchemaIssue[]) => unknown;

const ABSENT: unique symbol = Symbol("absent");

export function issue(issues: SchemaIssue[], path: readonly string[], message: string): void {
  issues.push({ path: path.length === 0 ? "(root)" : path.join("."), message });
}

/** zod's name of a JSON value's type, as its messages say it. */
function typeName(value: unknown): string {
  if (value === undefined) return "undefined";
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  return typeof value;
}

/** zod's message for a value of the wrong type. */
export function expected(issues: SchemaIssue[], path: readonly string[], type: string, value: unknown): void {
  issue(issues, path, `Invalid input: expected ${type}, received ${typeName(value)}`);
}

export interface StringRule {
  readonly min?: number;
  readonly max?: number;
  readonly pattern?: RegExp;
  /** The message when `pattern` does not match. */
  readonly patternMessage?: string;
}

/** Unicode code points, as zod counts a string's length: a surrogate pair is one character. */
function codePoints(text: string): number {
  let count = text.length;
  for (let i = 0; i < text.length - 1; i++) {
    if ((text.charCodeAt(i) & 0xfc00) === 0xd800 && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      count--;
      i++;
    }
  }
  return count;
}

const SIZED: Readonly<Record<string, string>> = { string: "characters", array: "items" };

/**
 * zod's length checks: they run on anything with a `length` (so an array in a string field gets a
 * length issue besides the type issue, exactly as zod reports it), measuring strings in code points.
 */
function checkLength(value: unknown, path: readonly string[], issues: SchemaIssue[], rule: StringRule): void {
  if (value === null || value === undefined) return;
  const units = (value as { length?: unknown }).length;
  if (units === undefined) return;
  const origin = typeof value === "string" ? "string" : Array.isArray(value) ? "array" : "unknown";
  const unit = SIZED[origin];
  const size = (adjective: string, bound: number) =>
    unit === undefined
      ? `${origin} to be ${adjective}${bound}`
      : `${origin} to have ${adjective}${bound} ${unit}`;
  // Comparisons as zod makes them, on whatever `length` holds (a JSON object may carry one).
  const n = units as number;
  if (rule.min !== undefined) {
    const length = typeof value === "string" && n >= rule.min && n < rule.min * 2 ? codePoints(value) : n;
    if (!(length >= rule.min)) issue(issues, path, `Too small: expected ${size(">=", rule.min)}`);
  }
  if (rule.max !== undefined) {
    const length = typeof value === "string" && n > rule.max ? codePoints(value) : n;
    if (!(length <= rule.max)) issue(issues, path, `Too big: expected ${size("<=", rule.max)}`);
  }
}

export function string(rule: StringRule = {}): Rule {
  return (value, path, issues) => {
    if (typeof value !== "string") {
      expected(issues, path, "string", value);
      checkLength(value, path, issues, rule);
      return value;
    }
    checkLength(value, path, issues, rule);
    if (rule.pattern !== undefined && !rule.pattern.test(value)) {
      issue(issues, path, rule.patternMessage ?? `Invalid string: must match pattern ${rule.pattern}`);
    }
    return value;
  };
}

/**
 * The calendar date of zod's ISO datetimes: February 29th only in leap years. The same expression as
 * zod's, so the two cannot disagree.
 */
export const DATE =
  "(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))";

export function boolean(): Rule {
  return (value, path, issues) => {
    if (typeof value !== "boolean") expected(issues, path, "boolean", value);
    return value;
  };
}

export function literal(expectedValue: string | number): Rule {
  return (value, path, issues) => {
    if (value !== expectedValue)
      issue(issues, path, `Invalid input: expected ${JSON.stringify(expectedValue)}`);
    return value;
  };
}

/** A plain JSON object, passed through as it is (not rebuilt). */
export function plainObject(message: string): Rule {
  return (value, path, issues) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) issue(issues, path, message);
    return value;
  };
}

/** Absent is fine (and stays absent); present must pass `rule`. */
export function optional(rule: Rule): Rule {
  const optionalRule: Rule = (value, path, issues) =>
    value === undefined ? ABSENT : rule(value, path, issues);
  return optionalRule;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** As `z.object`: every field checked, unknown fields dropped, the result rebuilt in field order. */
export function object(shape: Readonly<Record<string, Rule>>): Rule {
  const keys = Object.keys(shape);
  return (value, path, issues) => {
    if (!isRecord(value)) {
      expected(issues, path, "object", value);
      return value;
    }
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const rule = shape[key] as Rule;
      const kept = rule(value[key], [...path, key], issues);
      if (kept !== ABSENT) out[key] = kept;
    }
    return out;
  };
}

/** As `z.discriminatedUnion`: the discriminator picks the one shape that applies. */
export function discriminated(key: string, options: Readonly<Record<string, Rule>>): Rule {
  const values = Object.keys(options);
  return (value, path, issues) => {
    if (!isRecord(value)) {
      expected(issues, path, "object", value);
      return value;
    }
    const tag = value[key];
    const rule = typeof tag === "string" && Object.hasOwn(options, tag) ? options[tag] : undefined;
    if (rule === undefined) {
      issue(
        issues,
        [...path, key],
        `Invalid discriminator value. Expected ${values.map((v) => `'${v}'`).join(" | ")}`,
      );
      return value;
    }
    return rule(value, path, issues);
  };
}
