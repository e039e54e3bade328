import { describe, expect, it } from "vitest";
import * as z from "zod";
import { describeIssue, dottedIssue, issuePath } from "../../../src/schema-issues/index.js";

const schema = z.object({ items: z.array(z.object({ id: z.string() })), count: z.number().int() });

/** The issues zod itself reports for `input`. */
function issuesOf(input: unknown) {
  const parsed = schema.safeParse(input);
  if (parsed.success) throw new Error("expected the input to break the schema");
  return parsed.error.issues;
}

describe("schema issues", () => {
  it("writes a zod issue's path with dots, array indices included", () => {
    const [issue] = issuesOf({ items: [{ id: "a" }, { id: 7 }], count: 1 });
    expect(issue && dottedIssue(issue)).toEqual({
      path: "items.1.id",
      message: "Invalid input: expected string, received number",
    });
    expect(issue && describeIssue(issue)).toBe("items.1.id: Invalid input: expected string, received number");
  });

  it("names an issue of the whole document by the root label, (root) unless told otherwise", () => {
    const [issue] = issuesOf("not an object");
    expect(issue && describeIssue(issue)).toBe("(root): Invalid input: expected object, received string");
    expect(issue && describeIssue(issue, "(env)")).toBe(
      "(env): Invalid input: expected object, received string",
    );
  });

  it("lists every issue of an input, each with its own path", () => {
    expect(issuesOf({ items: "x", count: 1.5 }).map((i) => describeIssue(i))).toEqual([
      "items: Invalid input: expected array, received string",
      "count: Invalid input: expected int, received number",
    ]);
  });

  it("writes symbol keys by their description rather than failing", () => {
    expect(issuePath(["a", Symbol("meta"), 2])).toBe("a.Symbol(meta).2");
  });

  it("refuses an empty root label: an issue of the whole document would read as ': message'", () => {
    expect(() => issuePath([], "")).toThrow(new RangeError("issuePath: the root label must not be empty"));
  });
});
