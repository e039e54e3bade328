import { describe, expect, it } from "vitest";
import { compileWithAjv } from "../../../src/registry/ajv.js";
import {
  defineTool,
  TOOL_RUN_KEY_NAMESPACE,
  ToolRegistry,
  toolRunIdempotencyKey,
} from "../../../src/registry/index.js";

describe("toolRunIdempotencyKey: one key per job, the same for every run of it", () => {
  it("is the name-based UUID (version 5, RFC 9562, section 5.5) of the callId in TOOL_RUN_KEY_NAMESPACE, as any UUID library derives it", () => {
    // Python: uuid.uuid5(uuid.UUID("d18f3c6e-2297-48d5-9fc5-7a0cde8a38c7"), name)
    expect(TOOL_RUN_KEY_NAMESPACE).toBe("d18f3c6e-2297-48d5-9fc5-7a0cde8a38c7");
    expect(toolRunIdempotencyKey("call-1")).toBe("76026251-56fa-5683-b099-ba2d9f9f1db9");
    expect(toolRunIdempotencyKey("c/ü-2")).toBe("0def2f75-16dc-552d-91e1-b0a519ad0c1b");
    expect(toolRunIdempotencyKey("call-2")).not.toBe(toolRunIdempotencyKey("call-1"));
  });

  it("reaches every run of a job in the tool's context, whatever the attempt", async () => {
    const seen: string[] = [];
    const registry = new ToolRegistry(
      [
        defineTool({
          name: "keyed",
          description: "Records its idempotency key.",
          inputSchema: { type: "object" },
          timeoutMs: 1_000,
          concurrency: 1,
          run: async (_args, { idempotencyKey }) => {
            seen.push(idempotencyKey);
          },
        }),
      ],
      compileWithAjv(),
    );
    const silent = { debug() {}, info() {}, warn() {}, error() {} };
    for (const attempt of [1, 2, 5])
      await registry.invoke(
        { tool: "keyed", arguments: {}, callId: "call-1", sessionId: "s", attempt },
        { logger: silent },
      );
    expect(seen).toEqual(Array(3).fill(toolRunIdempotencyKey("call-1")));
  });
});
