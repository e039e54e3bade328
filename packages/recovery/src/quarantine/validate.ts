import { describeIssue } from "@mcp-pipeline/contracts/schema-issues";
import type { QuarantineRecord } from "./schema.js";
import { MAX_ARRIVAL_SECONDS, QUARANTINE_FORMAT_VERSION } from "./version.js";

/**
 * schema.ts's quarantineRecordSchema without zod: the same verdicts (test/validate.test.ts runs both over
 * the bad-record table and generated records), the same output (unknown keys dropped, as z.object does),
 * and an issue per failing field with its path. What the processor and dlq-redrive run on every write.
 */

export interface QuarantineIssue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

export type QuarantineValidation =
  | { readonly success: true; readonly data: QuarantineRecord }
  | { readonly success: false; readonly issues: readonly QuarantineIssue[] };

type Path = readonly (string | number)[];
type Issues = QuarantineIssue[];
/** Checks one value; returns what the output holds (undefined: the key is left out). */
type Rule = (value: unknown, path: Path, issues: Issues) => unknown;

const DATE =
  "(?:(?:\\d\\d[2468][048]|\\d\\d[13579][26]|\\d\\d0[48]|[02468][048]00|[13579][26]00)-02-29|\\d{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12]\\d|3[01])|(?:0[469]|11)-(?:0[1-9]|[12]\\d|30)|(?:02)-(?:0[1-9]|1\\d|2[0-8])))";
/** zod's `iso.datetime()`: UTC (Z), seconds required, any fraction; the same expression as zod's. */
const DATETIME = new RegExp(`^${DATE}T(?:(?:[01]\\d|2[0-3]):[0-5]\\d:[0-5]\\d(?:\\.\\d+)?(?:Z))$`);
const SEQUENCE_NUMBER = /^\d{1,128}$/;

const typeName = (value: unknown) =>
  value === null ? "null" : Array.isArray(value) ? "array" : typeof value;

function string(
  options: { min?: number; max?: number; pattern?: RegExp; patternMessage?: string } = {},
): Rule {
  return (value, path, issues) => {
    if (typeof value !== "string") {
      issues.push({ path, message: `Invalid input: expected string, received ${typeName(value)}` });
      return value;
    }
    if (options.min !== undefined && value.length < options.min)
      issues.push({ path, message: `Too small: expected string to have >=${options.min} characters` });
    if (options.max !== undefined && value.length > options.max)
      issues.push({ path, message: `Too big: expected string to have <=${options.max} characters` });
    if (options.pattern && !options.pattern.test(value))
      issues.push({
        path,
        message: options.patternMessage ?? `Invalid string: must match pattern ${options.pattern}`,
      });
    return value;
  };
}

function number(options: { int?: boolean; min?: number; max?: number } = {}): Rule {
  return (value, path, issues) => {
    if (typeof value !== "number" || !Number.isFinite(value)) {
      issues.push({ path, message: `Invalid input: expected number, received ${typeName(value)}` });
    } else if (options.int && !Number.isSafeInteger(value)) {
      issues.push({ path, message: "Invalid input: expected int, received number" });
    } else if (options.min !== undefined && value < options.min) {
      issues.push({ path, message: `Too small: expected number to be >=${options.min}` });
    } else if (options.max !== undefined && value > options.max) {
      issues.push({ path, message: `Too big: expected number to be <=${options.max}` });
    }
    return value;
  };
}

const literal =
  (expected: string | number): Rule =>
  (value, path, issues) => {
    if (value !== expected)
      issues.push({ path, message: `Invalid input: expected ${JSON.stringify(expected)}` });
    return value;
  };

const unknown: Rule = (value) => value;

const optional =
  (rule: Rule): Rule =>
  (value, path, issues) =>
    value === undefined ? undefined : rule(value, path, issues);

const nullable =
  (rule: Rule): Rule =>
  (value, path, issues) =>
    value === null ? null : rule(value, path, issues);

function object(shape: Record<string, Rule>): Rule {
  return (value, path, issues) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      issues.push({ path, message: `Invalid input: expected object, received ${typeName(value)}` });
      return value;
    }
    const input = value as Record<string, unknown>;
    const output: Record<string, unknown> = {};
    for (const [key, rule] of Object.entries(shape)) {
      const field = rule(input[key], [...path, key], issues);
      if (field !== undefined || key in input) output[key] = field;
    }
    return output;
  };
}

const nonEmpty = string({ min: 1 });

const quarantineRecord = object({
  formatVersion: literal(QUARANTINE_FORMAT_VERSION),
  source: object({
    kind: literal("kinesis"),
    streamArn: nonEmpty,
    shardId: nonEmpty,
    sequenceNumber: string({ pattern: SEQUENCE_NUMBER }),
    partitionKey: string({ min: 1, max: 256 }),
    approximateArrivalTimestamp: number({ min: 0, max: MAX_ARRIVAL_SECONDS }),
  }),
  data: string(),
  reason: object({ code: nonEmpty, message: string(), details: optional(unknown) }),
  failure: optional(
    object({
      condition: optional(string()),
      approximateInvokeCount: optional(number({ int: true })),
      functionError: optional(nullable(string())),
      requestId: optional(string()),
      functionArn: optional(string()),
      timestamp: optional(string()),
    }),
  ),
  quarantinedAt: string({ pattern: DATETIME, patternMessage: "Invalid ISO datetime" }),
  quarantinedBy: nonEmpty,
});

export function validateQuarantineRecord(value: unknown): QuarantineValidation {
  const issues: Issues = [];
  const data = quarantineRecord(value, [], issues);
  return issues.length === 0 ? { success: true, data: data as QuarantineRecord } : { success: false, issues };
}

/** `source.sequenceNumber: Invalid string: must match pattern /^\d{1,128}$/; ...` */
export const describeIssues = (issues: readonly QuarantineIssue[]) =>
  issues.map((issue) => describeIssue(issue)).join("; ");
