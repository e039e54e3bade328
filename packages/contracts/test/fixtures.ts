import type { ToolCallJob, ToolCallLifecycleEvent } from "../src/index.js";

export const requested: ToolCallLifecycleEvent = {
  specVersion: "1.0",
  eventId: "evt-1",
  type: "tool_call.requested",
  sessionId: "session-1",
  callId: "call-1",
  tool: "search.web",
  occurredAt: "2026-11-30T10:00:00.000Z",
  argumentsDigest: "a".repeat(64),
};

export const job: ToolCallJob = {
  specVersion: "1.0",
  callId: "call-1",
  sessionId: "session-1",
  tool: "search.web",
  arguments: { query: "kinesis ordering", limit: 5 },
  enqueuedAt: "2026-11-30T10:00:00.000Z",
};

export const b64 = (text: string): string => Buffer.from(text, "utf8").toString("base64");
