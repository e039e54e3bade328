import { describe, expect, it } from "vitest";
import {
  decodeLifecycleEventBytes,
  decodeToolCallJob,
  jsonErrorForLogs,
  urlForLogs,
} from "../../src/index.js";

// Error messages are logged and stored (quarantine records, DLQ attributes, failed calls): they say what is
// wrong and where, never the data (issue 25 item 11).
const SECRET = "s3cr3t";

describe("urlForLogs", () => {
  it.each([
    [
      "https://user:pw@api.example.com:8443/v1/items?token=s3cr3t#frag",
      "https://api.example.com:8443/v1/items",
    ],
    ["http://127.0.0.1:9001/2018-06-01/runtime", "http://127.0.0.1:9001/2018-06-01/runtime"],
    ["not a url ?token=s3cr3t", "(not a URL)"],
  ])("%s is shown as %s", (url, shown) => {
    expect(urlForLogs(url)).toBe(shown);
    expect(urlForLogs(url)).not.toContain(SECRET);
  });
});

describe("jsonErrorForLogs and the decoders' messages", () => {
  const texts = [
    `{"pw": ${SECRET}}`,
    `${SECRET}`,
    `[${SECRET}]`,
    `{"pw":"${SECRET}"} trailing`,
    `{"pw":"${SECRET}"`,
    `{"pw":"${SECRET}\u0001"}`,
  ];

  it.each(texts)("%j: the message names no part of the text", (text) => {
    let error: unknown;
    try {
      JSON.parse(text);
    } catch (e) {
      error = e;
    }
    expect(jsonErrorForLogs(error)).not.toContain(SECRET);
    const job = decodeToolCallJob(text);
    const event = decodeLifecycleEventBytes(new TextEncoder().encode(text));
    for (const result of [job, event]) {
      expect(result.ok).toBe(false);
      if (result.ok) continue;
      expect(result.error.code).toBe("bad-json");
      expect(result.error.message).not.toContain(SECRET);
      // No cause to carry V8's original message into a log that prints causes.
      expect(result.error.cause).toBeUndefined();
    }
  });

  it("keeps V8's messages that name only a position", () => {
    expect(decodeToolCallJob('{"a":1 "b":2}')).toMatchObject({
      ok: false,
      error: { message: expect.stringMatching(/at position 7/) },
    });
  });

  it.each([
    [SECRET, "(a string of 6 characters)"],
    [{ nested: SECRET }, "(an object)"],
    [42, "(a number)"],
    [[SECRET], "(an array)"],
    ["2.0", '"2.0"'],
  ])("an unsupported specVersion %j is named %s", (version, shown) => {
    const result = decodeToolCallJob(JSON.stringify({ specVersion: version, callId: "c" }));
    expect(result).toMatchObject({ ok: false, error: { code: "unsupported-version" } });
    if (!result.ok) {
      expect(result.error.message).toContain(shown);
      expect(result.error.message).not.toContain(SECRET);
    }
  });
});
