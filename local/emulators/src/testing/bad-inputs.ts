/**
 * The bad-input corpus (issue 13, section 4): every boundary's bad-input test (`test/bad-input.<boundary>
 * .test.ts` in the package that owns the boundary) runs the same categories, built here from the shape of
 * what that boundary reads, through `badInputTable`, which refuses a boundary that leaves a category out.
 */

export const BadInputCategory = {
  Empty: "empty",
  Truncated: "truncated",
  Oversized: "oversized",
  WrongType: "wrong type",
  WrongVersion: "wrong version",
  InvalidUtf8: "invalid UTF-8",
  DeeplyNested: "deeply nested",
  Hostile: "hostile values",
} as const;
export type BadInputCategory = (typeof BadInputCategory)[keyof typeof BadInputCategory];

export const BAD_INPUT_CATEGORIES: readonly BadInputCategory[] = Object.values(BadInputCategory);

/** The largest data blob a Kinesis record holds, partition key included (docs/aws-semantics.md §1.8). */
export const KINESIS_RECORD_MAX_BYTES = 1_048_576;
/** The SQS message size the pipeline's queues are held to (docs/aws-semantics.md §2.5). */
export const SQS_MESSAGE_MAX_BYTES = 262_144;
/** How deep the deeply nested cases go. */
export const NESTING_DEPTH = 10_000;
/** The property the hostile cases try to plant on Object.prototype. */
export const POLLUTION_MARKER = "polluted";

/** One bad input of a category: `value` is what the boundary receives (bytes, an argv...). */
export interface BadInput<T> {
  readonly category: BadInputCategory;
  readonly name: string;
  readonly value: T;
}

export type BadInputCorpus<T> = Readonly<Record<BadInputCategory, readonly BadInput<T>[]>>;

/** What a boundary's test asserts for each category: a clear error, and nothing lost. */
export type BadInputExpectations<T> = {
  readonly [C in BadInputCategory]: (input: BadInput<T>) => Promise<void> | void;
};

export interface BadInputRow {
  /** `<category>: <case>`, the test's name. */
  readonly label: string;
  readonly run: () => Promise<void>;
}

/** A category a boundary's test left out, or one the corpus has no case for. */
export class MissingBadInputCategoryError extends Error {
  readonly category: string;

  constructor(category: string, what: string) {
    super(`bad-input category "${category}": ${what}`);
    this.name = "MissingBadInputCategoryError";
    this.category = category;
  }
}

/**
 * The rows of a boundary's table test (`it.each(badInputTable(corpus, expect))("$label", ({ run }) =>
 * run())`): every case of every category, run through the boundary's expectation for its category. Throws
 * when a category has no case or no expectation, so a test file that skips one fails as it loads.
 */
export function badInputTable<T>(
  corpus: BadInputCorpus<T>,
  expectations: BadInputExpectations<T>,
): BadInputRow[] {
  return BAD_INPUT_CATEGORIES.flatMap((category) => {
    const cases = corpus[category] ?? [];
    const expectation = expectations[category];
    if (cases.length === 0) throw new MissingBadInputCategoryError(category, "the corpus has no case");
    if (typeof expectation !== "function")
      throw new MissingBadInputCategoryError(category, "the boundary's test has no expectation");
    return cases.map((input) => ({
      label: `${category}: ${input.name}`,
      run: async () => {
        await expectation(input);
      },
    }));
  });
}

// ---------------------------------------------------------------------------------------------------
// JSON documents (Kinesis data, SQS bodies, failure records, quarantine objects, tfvars files)

/** The shape of the documents a boundary reads, from which the corpus derives its bad ones. */
export interface DocumentShape {
  /** A document the boundary accepts. */
  readonly valid: Readonly<Record<string, unknown>>;
  /** The boundary's size limit in bytes: the oversized case is exactly this big. */
  readonly maxBytes: number;
  /** Dotted path of a string field the boundary checks: long strings and wrong types go there. */
  readonly stringField: string;
  /** Dotted path of a number field: huge numbers, -0 and numbers written as strings go there. */
  readonly numberField: string;
  /** Dotted path of a field that holds any JSON object (a job's `arguments`): nesting and `__proto__` go there too. */
  readonly objectField?: string;
  /**
   * The document's version field and versions the boundary does not read. Without one, the corpus adds
   * a `version` key the format does not have.
   */
  readonly version?: { readonly field: string; readonly unsupported: readonly unknown[] };
  /**
   * Dotted paths of fields whose bad value the boundary names in its error (a decoder that says which
   * version it refuses): the deeply nested cases go there too, so that an error built from such a value
   * is seen to stay bounded (issue 24: a `specVersion` nested thousands of levels deep made the error's
   * `JSON.stringify` throw `RangeError` outside the record's own handling).
   */
  readonly echoedFields?: readonly string[];
}

const encoder = new TextEncoder();

/** A placeholder string that `withRaw` replaces by raw JSON text (numbers JSON.stringify cannot write). */
const RAW = "\u0000raw\u0000";

function setPath(document: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
  const copy = structuredClone(document) as Record<string, unknown>;
  const keys = path.split(".");
  let target = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  target[keys.at(-1) as string] = value;
  return copy;
}

/** The document's JSON with `path` holding `raw`, verbatim (`1e400`, `-0`, a 10,000-level object). */
function withRaw(document: Readonly<Record<string, unknown>>, path: string, raw: string): string {
  return JSON.stringify(setPath({ ...document }, path, RAW)).replace(JSON.stringify(RAW), () => raw);
}

function valueAt(document: Readonly<Record<string, unknown>>, path: string): unknown {
  return path.split(".").reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], document);
}

/** `object`'s JSON with `__proto__` and `constructor.prototype` keys that would plant POLLUTION_MARKER. */
function pollutingObject(object: unknown): string {
  const json = JSON.stringify(object);
  const hostile = `"__proto__":{"${POLLUTION_MARKER}":"yes"},"constructor":{"prototype":{"${POLLUTION_MARKER}":"yes"}}`;
  return json === "{}" ? `{${hostile}}` : `${json.slice(0, -1)},${hostile}}`;
}

/** The document's UTF-8 bytes with `bytes` spliced into the string at `path`. */
function withBytes(document: Readonly<Record<string, unknown>>, path: string, bytes: number[]): Uint8Array {
  // JSON.stringify escapes the placeholder's NULs: split on its escaped form.
  const [before = "", after = ""] = JSON.stringify(setPath({ ...document }, path, `a${RAW}b`)).split(
    JSON.stringify(RAW).slice(1, -1),
  );
  return Uint8Array.from([...encoder.encode(before), ...bytes, ...encoder.encode(after)]);
}

/** The document with `path` padded so that its JSON is exactly `bytes` long. */
function padded(document: Readonly<Record<string, unknown>>, path: string, bytes: number): Uint8Array {
  const base = encoder.encode(JSON.stringify(setPath({ ...document }, path, ""))).length;
  return encoder.encode(
    JSON.stringify(setPath({ ...document }, path, "x".repeat(Math.max(0, bytes - base)))),
  );
}

/** The bytes up to and including the first byte of the first "é" (0xC3 0xA9): cut inside the character. */
function cutInside(bytes: Uint8Array): Uint8Array {
  return bytes.slice(0, bytes.indexOf(0xc3) + 1);
}

export const nestedArrays = (depth: number): string => "[".repeat(depth) + "]".repeat(depth);
export const nestedObjects = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

const text = (category: BadInputCategory, name: string, json: string): BadInput<Uint8Array> => ({
  category,
  name,
  value: encoder.encode(json),
});

/** The bad documents of every category for a boundary that reads documents shaped like `shape`. */
export function badDocuments(shape: DocumentShape): BadInputCorpus<Uint8Array> {
  const C = BadInputCategory;
  return {
    [C.Empty]: emptyDocuments(),
    [C.Truncated]: truncatedDocuments(shape),
    [C.Oversized]: oversizedDocuments(shape),
    [C.WrongType]: wrongTypeDocuments(shape),
    [C.WrongVersion]: wrongVersionDocuments(shape),
    [C.InvalidUtf8]: invalidUtf8Documents(shape),
    [C.DeeplyNested]: deeplyNestedDocuments(shape),
    [C.Hostile]: hostileDocuments(shape),
  };
}

function emptyDocuments(): BadInput<Uint8Array>[] {
  const C = BadInputCategory;
  return [
    text(C.Empty, "no bytes", ""),
    text(C.Empty, "whitespace only", " \n\t"),
    text(C.Empty, "{}", "{}"),
  ];
}

function truncatedDocuments({ valid, stringField }: DocumentShape): BadInput<Uint8Array>[] {
  const C = BadInputCategory;
  const json = JSON.stringify(valid);
  return [
    text(C.Truncated, "cut in the middle", json.slice(0, Math.floor(json.length / 2))),
    text(C.Truncated, "the last brace missing", json.slice(0, -1)),
    {
      category: C.Truncated,
      name: "cut inside a multi-byte character",
      value: cutInside(encoder.encode(JSON.stringify(setPath({ ...valid }, stringField, "é")))),
    },
  ];
}

function oversizedDocuments({ valid, stringField, maxBytes }: DocumentShape): BadInput<Uint8Array>[] {
  return [
    {
      category: BadInputCategory.Oversized,
      name: `exactly ${maxBytes} bytes, the limit, in ${stringField}`,
      value: padded(valid, stringField, maxBytes),
    },
  ];
}

function wrongTypeDocuments({ valid, stringField, numberField }: DocumentShape): BadInput<Uint8Array>[] {
  const C = BadInputCategory;
  return [
    text(C.WrongType, "an array", "[]"),
    text(C.WrongType, "a string", '"x"'),
    text(C.WrongType, "a number", "42"),
    text(C.WrongType, "null", "null"),
    text(C.WrongType, `${stringField} a number`, JSON.stringify(setPath({ ...valid }, stringField, 42))),
    text(C.WrongType, `${numberField} a string`, JSON.stringify(setPath({ ...valid }, numberField, "1"))),
  ];
}

/** The versions the boundary does not read or, for a format without one, a version key it does not have. */
function wrongVersionDocuments({ valid, version: versions }: DocumentShape): BadInput<Uint8Array>[] {
  const C = BadInputCategory;
  return versions
    ? versions.unsupported.map((version) =>
        text(
          C.WrongVersion,
          `${versions.field} ${JSON.stringify(version)}`,
          JSON.stringify(setPath({ ...valid }, versions.field, version)),
        ),
      )
    : [
        text(
          C.WrongVersion,
          "a version key the format does not have",
          JSON.stringify({ ...valid, version: "2.0" }),
        ),
      ];
}

function invalidUtf8Documents({ valid, stringField }: DocumentShape): BadInput<Uint8Array>[] {
  const C = BadInputCategory;
  return [
    {
      category: C.InvalidUtf8,
      name: `0xFF 0xFE in ${stringField}`,
      value: withBytes(valid, stringField, [0xff, 0xfe]),
    },
    {
      category: C.InvalidUtf8,
      name: `an overlong "/" in ${stringField}`,
      value: withBytes(valid, stringField, [0xc0, 0xaf]),
    },
    {
      category: C.InvalidUtf8,
      name: `a lone surrogate in ${stringField}`,
      value: withBytes(valid, stringField, [0xed, 0xa0, 0x80]),
    },
  ];
}

function deeplyNestedDocuments(shape: DocumentShape): BadInput<Uint8Array>[] {
  const { valid, stringField, objectField } = shape;
  const C = BadInputCategory;
  return [
    text(C.DeeplyNested, `${NESTING_DEPTH} nested arrays`, nestedArrays(NESTING_DEPTH)),
    text(
      C.DeeplyNested,
      `${NESTING_DEPTH} nested objects in ${stringField}`,
      withRaw(valid, stringField, nestedObjects(NESTING_DEPTH)),
    ),
    text(
      C.DeeplyNested,
      `${NESTING_DEPTH} nested objects in a key the format does not have`,
      withRaw(valid, "nested", nestedObjects(NESTING_DEPTH)),
    ),
    ...(shape.echoedFields ?? []).flatMap((field) => [
      text(
        C.DeeplyNested,
        `${NESTING_DEPTH} nested objects in ${field}`,
        withRaw(valid, field, nestedObjects(NESTING_DEPTH)),
      ),
      text(
        C.DeeplyNested,
        `${NESTING_DEPTH} nested arrays in ${field}`,
        withRaw(valid, field, nestedArrays(NESTING_DEPTH)),
      ),
    ]),
    ...(objectField
      ? [
          text(
            C.DeeplyNested,
            `${NESTING_DEPTH} nested objects in ${objectField}`,
            withRaw(valid, `${objectField}.nested`, nestedObjects(NESTING_DEPTH)),
          ),
        ]
      : []),
  ];
}

function hostileDocuments({
  valid,
  stringField,
  numberField,
  objectField,
}: DocumentShape): BadInput<Uint8Array>[] {
  const C = BadInputCategory;
  const json = JSON.stringify(valid);
  return [
    text(C.Hostile, "every field under __proto__", `{"__proto__":${json}}`),
    text(C.Hostile, "__proto__ and constructor.prototype beside the fields", pollutingObject(valid)),
    ...(objectField
      ? [
          text(
            C.Hostile,
            `__proto__ and constructor.prototype in ${objectField}`,
            withRaw(valid, objectField, pollutingObject(valueAt(valid, objectField))),
          ),
        ]
      : []),
    text(C.Hostile, `${numberField} 1e400`, withRaw(valid, numberField, "1e400")),
    text(C.Hostile, `${numberField} 2^64`, withRaw(valid, numberField, "18446744073709551616")),
    text(C.Hostile, `${numberField} -0`, withRaw(valid, numberField, "-0")),
    text(C.Hostile, `${numberField} "NaN"`, withRaw(valid, numberField, '"NaN"')),
    text(C.Hostile, `${numberField} "Infinity"`, withRaw(valid, numberField, '"Infinity"')),
    text(
      C.Hostile,
      `${stringField} 100,000 characters`,
      withRaw(valid, stringField, `"${"x".repeat(100_000)}"`),
    ),
  ];
}

/** The version fields' values the corpora use where a document says `specVersion` (packages/contracts). */
const UNSUPPORTED_SPEC_VERSIONS = ["2.0", 1, "v1", null] as const;

/**
 * A `tool_call.started` event as the processor reads it from Kinesis data (packages/contracts): the Kinesis
 * corpus's shape, at most one record's size with its partition key, the session id (§1.8).
 */
export function lifecycleEventShape(init: {
  sessionId: string;
  callId: string;
  tool: string;
}): DocumentShape {
  return {
    valid: {
      specVersion: "1.0",
      eventId: `evt-${init.callId}`,
      type: "tool_call.started",
      sessionId: init.sessionId,
      callId: init.callId,
      tool: init.tool,
      occurredAt: "2026-11-30T10:00:00.000Z",
      attempt: 1,
    },
    maxBytes: KINESIS_RECORD_MAX_BYTES - init.sessionId.length,
    stringField: "tool",
    numberField: "attempt",
    version: { field: "specVersion", unsupported: UNSUPPORTED_SPEC_VERSIONS },
    // UnsupportedVersionError names the version it refuses.
    echoedFields: ["specVersion"],
  };
}

/** A text.stats job as the workers read it from an SQS body (packages/contracts): the SQS corpus's shape (§2.5). */
export function toolCallJobShape(init: { sessionId: string; callId: string }): DocumentShape {
  return {
    valid: {
      specVersion: "1.0",
      callId: init.callId,
      sessionId: init.sessionId,
      tool: "text.stats",
      arguments: { text: "hello" },
      enqueuedAt: "2026-11-30T10:00:00.000Z",
    },
    maxBytes: SQS_MESSAGE_MAX_BYTES,
    stringField: "tool",
    // A job has no number field: hostile numbers go where a string is expected.
    numberField: "sessionId",
    objectField: "arguments",
    version: { field: "specVersion", unsupported: UNSUPPORTED_SPEC_VERSIONS },
    echoedFields: ["specVersion"],
  };
}

/** The decode error class (packages/contracts) behind each reason code a quarantine or DLQ keeps. */
export const DECODE_ERROR_CLASS = {
  "bad-encoding": "BadEncodingError",
  "bad-json": "BadJsonError",
  "schema-violation": "SchemaViolationError",
  "unsupported-version": "UnsupportedVersionError",
  "malformed-record": "MalformedRecordError",
} as const;
export type DecodeErrorCode = keyof typeof DECODE_ERROR_CLASS;

/** The document's text as a boundary that receives text (an SQS body) gets it: invalid bytes as U+FFFD. */
export const asText = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);

// ---------------------------------------------------------------------------------------------------
// Command lines

/**
 * The bad command lines of every category for a CLI with a whole-number option `option` (`--seed`), each
 * appended to `prefix` (a subcommand and its required options).
 */
export function badArguments(
  option: string,
  prefix: readonly string[] = [],
): BadInputCorpus<readonly string[]> {
  const C = BadInputCategory;
  const arg = (category: BadInputCategory, name: string, ...argv: string[]): BadInput<readonly string[]> => ({
    category,
    name,
    value: [...prefix, ...argv],
  });
  const flag = `--${option}`;
  return {
    [C.Empty]: [arg(C.Empty, "an empty value", flag, ""), arg(C.Empty, "an empty value after =", `${flag}=`)],
    [C.Truncated]: [
      arg(C.Truncated, "the value missing at the end", flag),
      arg(C.Truncated, "an option name cut short", flag.slice(0, -1), "1"),
    ],
    [C.Oversized]: [arg(C.Oversized, "a 1 MiB value", flag, "9".repeat(KINESIS_RECORD_MAX_BYTES))],
    [C.WrongType]: [
      arg(C.WrongType, "a word", flag, "abc"),
      arg(C.WrongType, "a fraction", flag, "1.5"),
      arg(C.WrongType, "a boolean", flag, "true"),
    ],
    [C.WrongVersion]: [arg(C.WrongVersion, "an option of another version", `${flag}-v2`, "1")],
    [C.InvalidUtf8]: [
      // Node decodes argv as UTF-8, invalid bytes becoming U+FFFD; a lone surrogate survives as is.
      arg(C.InvalidUtf8, "0xFF 0xFE as Node decodes them", flag, Buffer.from([0xff, 0xfe]).toString("utf8")),
      arg(C.InvalidUtf8, "a lone surrogate", flag, "\ud800"),
    ],
    [C.DeeplyNested]: [
      arg(C.DeeplyNested, `${NESTING_DEPTH} nested arrays`, flag, nestedArrays(NESTING_DEPTH)),
    ],
    [C.Hostile]: [
      arg(C.Hostile, "--__proto__", "--__proto__", "x"),
      arg(C.Hostile, "--constructor", "--constructor", "x"),
      arg(C.Hostile, "1e400", flag, "1e400"),
      arg(C.Hostile, "2^64", flag, "18446744073709551616"),
      arg(C.Hostile, "-0", flag, "-0"),
      arg(C.Hostile, "NaN", flag, "NaN"),
      arg(C.Hostile, "Infinity", flag, "Infinity"),
      arg(C.Hostile, "hexadecimal", flag, "0x10"),
    ],
  };
}

// ---------------------------------------------------------------------------------------------------
// Prototype pollution

const prototypeKeys = Object.getOwnPropertyNames(Object.prototype).sort();

/** Throws if Object.prototype gained or lost a property since this module loaded (a hostile input planted one). */
export function assertNoPrototypePollution(): void {
  const now = Object.getOwnPropertyNames(Object.prototype).sort();
  const probe = {} as Record<string, unknown>;
  if (now.join() !== prototypeKeys.join() || POLLUTION_MARKER in probe) {
    throw new Error(
      `Object.prototype was polluted: ${now.filter((k) => !prototypeKeys.includes(k)).join(", ")}`,
    );
  }
}
