import fc from "fast-check";
import { describe, expect, it } from "vitest";
import * as z from "zod";
import * as s from "../../src/light-schema.js";

/**
 * The builders take zod's names, semantics and English messages (src/light-schema.ts), so zod is the
 * oracle here: each building block must give what its zod namesake gives, the same verdict and value and
 * the same issues (path and message), over the awkward values and generated ones. The schemas built with
 * them are tested as what they are (test/schemas.test.ts, the functions' config tests).
 */

type ZodLike = { safeParse(input: unknown): z.ZodSafeParseResult<unknown> };

function outcome(schema: ZodLike | s.ObjectSchema<never>, input: unknown) {
  const parsed = (schema as ZodLike).safeParse(input);
  if (parsed.success) return { success: true, data: parsed.data };
  const issues = parsed.error.issues
    .map((issue) => `${issue.path.map(String).join(".")}: ${issue.message}`)
    .sort();
  return { success: false, issues };
}

/** Both schemas on `{ v: value }` (and on `{}` when the value is absent). */
function expectSame(light: s.Field<unknown>, reference: z.ZodType, value: unknown): void {
  const input = value === undefined ? {} : { v: value };
  expect(outcome(s.object({ v: light }) as never, input)).toEqual(outcome(z.object({ v: reference }), input));
}

/** What an environment variable can hold: text, and the numbers' awkward spellings. */
const envText = fc.oneof(
  fc.constantFrom(
    "",
    " ",
    "0",
    "-0",
    "1",
    "+5",
    " 7 ",
    "16",
    "255",
    "256",
    "257",
    "-1",
    "1.5",
    "1e3",
    "0x10",
    "0b11",
    "Infinity",
    "-Infinity",
    "NaN",
    "abc",
    "900000",
    "900001",
    "9007199254740993",
    "1e300",
    "-1e300",
  ),
  fc.integer({ min: -1_000_000, max: 1_000_000 }).map(String),
  fc.double().map(String),
  fc.string({ maxLength: 8 }),
);
const anyValue = fc.oneof(
  envText,
  fc.constant(undefined),
  fc.constant(null),
  fc.boolean(),
  fc.double(),
  fc.integer(),
  fc.constant([]),
  fc.constant({}),
);

describe("light schemas against zod", () => {
  it("integer({ coerce }) is z.coerce.number().int().min().max()", () => {
    fc.assert(
      fc.property(
        anyValue,
        fc.integer({ min: -5, max: 300 }),
        fc.integer({ min: 0, max: 1_000_000 }),
        (v, min, span) => {
          expectSame(
            s.integer({ coerce: true, min, max: min + span }),
            z.coerce
              .number()
              .int()
              .min(min)
              .max(min + span),
            v,
          );
        },
      ),
      { numRuns: 3_000 },
    );
  });

  it("integer() is z.number().int().min().max()", () => {
    fc.assert(
      fc.property(anyValue, (v) =>
        expectSame(s.integer({ min: 1, max: 500 }), z.number().int().min(1).max(500), v),
      ),
      { numRuns: 2_000 },
    );
  });

  it("number() is z.number().min().max(), fractions allowed", () => {
    fc.assert(
      fc.property(anyValue, (v) =>
        expectSame(s.number({ min: 0, max: 8_640_000_000_000 }), z.number().min(0).max(8_640_000_000_000), v),
      ),
      { numRuns: 2_000 },
    );
  });

  it("unknown() is z.unknown(), and literal(number) z.literal(number)", () => {
    fc.assert(
      fc.property(anyValue, (v) => {
        expectSame(s.optional(s.unknown()), z.unknown().optional(), v);
        expectSame(s.literal(1), z.literal(1), v);
      }),
      { numRuns: 2_000 },
    );
  });

  it("withDefault(...) is .default(...), optional(...) .optional() and nullable(...) .nullable()", () => {
    fc.assert(
      fc.property(anyValue, (v) => {
        expectSame(
          s.withDefault(s.integer({ coerce: true, min: 60 }), 1_209_600),
          z.coerce.number().int().min(60).default(1_209_600),
          v,
        );
        expectSame(
          s.optional(s.integer({ coerce: true, min: 1, max: 1000 })),
          z.coerce.number().int().min(1).max(1000).optional(),
          v,
        );
        expectSame(s.withDefault(s.boolean(), true), z.boolean().default(true), v);
        expectSame(s.nullable(s.text()), z.string().nullable(), v);
        expectSame(s.optional(s.nullable(s.integer({}))), z.number().int().nullable().optional(), v);
      }),
      { numRuns: 2_000 },
    );
  });

  it("text(...) is z.string().min().max().regex(pattern, message)", () => {
    const pattern = /^[a-zA-Z0-9_.-]{1,128}$/;
    fc.assert(
      fc.property(fc.oneof(anyValue, fc.string({ unit: "grapheme", maxLength: 70 })), (v) => {
        expectSame(s.text({ min: 3, max: 63 }), z.string().min(3).max(63), v);
        expectSame(
          s.text({ pattern, patternMessage: "expected a name" }),
          z.string().regex(pattern, "expected a name"),
          v,
        );
      }),
      { numRuns: 2_000 },
    );
  });

  it.each([
    "https://api.example.com",
    "http://127.0.0.1:8080/base/",
    "  https://example.com/a  ",
    "https://exa\tmple.com/\n",
    "HTTPS://EXAMPLE.COM",
    "ftp://files.example",
    "not a url",
    "http:example.com",
    "https:/path",
    "http://",
    "http://[::1]:80/",
    "mailto:someone@example.com",
    "",
    "javascript:alert(1)",
  ])("httpUrl() is z.url({ protocol: /^https?$/ }) for %j", (v) => {
    expectSame(s.httpUrl(), z.url({ protocol: /^https?$/ }), v);
  });

  it("httpUrl() agrees with zod on generated text", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.webUrl(),
          fc.string(),
          fc.webUrl().map((u) => ` ${u.replace("://", ":/")}`),
        ),
        (v) => {
          expectSame(s.httpUrl(), z.url({ protocol: /^https?$/ }), v);
        },
      ),
      { numRuns: 1_000 },
    );
  });

  it("refined(inner, check, message) is inner.refine(check, message), the check skipped when inner fails", () => {
    const short = (v: string) => v.length <= 3;
    const light = s.refined(s.text({ min: 1 }), short, "at most 3 characters");
    const reference = z.string().min(1).refine(short, "at most 3 characters");
    for (const v of ["", "abc", "abcd", 7, undefined, null]) {
      expectSame(light, reference, v);
      expectSame(s.optional(light), reference.optional(), v);
    }
  });

  it("datetime() is z.iso.datetime()", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.constantFrom(
            "2026-11-30T10:00:00Z",
            "2026-11-30T10:00:00.1Z",
            "2026-11-30T10:00Z",
            "2026-11-30T10:00:00+01:00",
            "2026-02-29T10:00:00Z",
            "2028-02-29T10:00:00Z",
            "2026-11-30",
            "yesterday",
          ),
          anyValue,
        ),
        (v) => expectSame(s.datetime(), z.iso.datetime(), v),
      ),
      { numRuns: 1_000 },
    );
  });

  it("instant() is z.iso.datetime({ precision: 3 })", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
          fc.constantFrom(
            "2026-11-30T10:00:00.000Z",
            "2026-11-30T10:00:00Z",
            "2026-11-30T10:00:00.1Z",
            "2026-11-30T10:00:00.0001Z",
            "2026-11-30T10:00:00.000+01:00",
            "2026-02-29T10:00:00.000Z",
            "2028-02-29T10:00:00.000Z",
            "2026-11-30",
          ),
          anyValue,
        ),
        (v) => expectSame(s.instant(), z.iso.datetime({ precision: 3 }), v),
      ),
      { numRuns: 1_000 },
    );
  });

  it("plainObject(message) is z.custom of a plain object, kept as it is", () => {
    const isPlain = (v: unknown) => typeof v === "object" && v !== null && !Array.isArray(v);
    const reference = z.custom<Record<string, unknown>>(isPlain, { message: "expected an object" });
    fc.assert(
      fc.property(fc.oneof(anyValue, fc.jsonValue({ maxDepth: 2 }), fc.object()), (v) =>
        expectSame(s.plainObject("expected an object"), reference, v),
      ),
      { numRuns: 1_000 },
    );
    const withProto = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as unknown;
    const parsed = s.plainObject("expected an object").parse(withProto);
    expect(parsed).toBe(withProto);
    expect(Object.keys(parsed)).toEqual(["__proto__", "a"]);
  });

  it("check(schema, value) lists issues with dotted paths, (root) for the value itself", () => {
    const schema = s.object({ a: s.object({ b: s.integer({ min: 1 }) }), c: s.optional(s.text()) });
    expect(s.check(schema, { a: { b: 2 }, d: 1 })).toEqual({ ok: true, value: { a: { b: 2 } } });
    expect(s.check(schema, { a: { b: 0 }, c: 3 })).toEqual({
      ok: false,
      issues: [
        { path: "a.b", message: "Too small: expected number to be >=1" },
        { path: "c", message: "Invalid input: expected string, received number" },
      ],
    });
    expect(s.check(s.integer({ min: 1 }), "x")).toEqual({
      ok: false,
      issues: [{ path: "(root)", message: "Invalid input: expected number, received string" }],
    });
  });

  it("oneOf(...) is z.discriminatedUnion(...), nested objects and literals included", () => {
    const light = s.oneOf("kind", {
      a: s.object({ kind: s.literal("a"), n: s.withDefault(s.integer({ min: 1 }), 3) }),
      b: s.object({ kind: s.literal("b"), inner: s.withDefault(s.object({ x: s.optional(s.text()) }), {}) }),
    });
    const reference = z.discriminatedUnion("kind", [
      z.object({ kind: z.literal("a"), n: z.number().int().min(1).default(3) }),
      z.object({ kind: z.literal("b"), inner: z.object({ x: z.string().optional() }).default({}) }),
    ]);
    fc.assert(
      fc.property(
        fc.oneof(
          anyValue,
          fc.record(
            {
              kind: fc.oneof(fc.constantFrom("a", "b", "c"), anyValue),
              n: anyValue,
              inner: fc.oneof(anyValue, fc.record({ x: anyValue })),
            },
            { requiredKeys: [] },
          ),
        ),
        (v) => {
          const input = { v };
          expect(outcome(s.object({ v: light }) as never, input)).toEqual(
            outcome(z.object({ v: reference }), input),
          );
        },
      ),
      { numRuns: 3_000 },
    );
  });
});
