import { IncomingMessage, ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { ProxiedCall, UpstreamAnswer } from "@mcp-pipeline/emulators";
import { describe, expect, it } from "vitest";
import { parseCli } from "../../src/cli.js";
import { type DoorCounts, type DoorOptions, dynamoDbDoor, type EmulatorErrorTouch } from "../../src/doors.js";
import { callIdsIn } from "../../src/harness.js";
import { buildPlan } from "../../src/plan.js";

/** A plan that injects nothing at the doors: every failure below is the emulator's own. */
const plan = buildPlan(
  parseCli(["--events", "10", "--dynamodb-rate", "0", "--dynamodb-after-write-rate", "0"]).chaos,
);

function door() {
  const counts: DoorCounts = {
    dynamodbFaults: 0,
    dynamodbAfterWriteFaults: 0,
    s3Faults: 0,
    emulatorErrors: 0,
  };
  const seen: EmulatorErrorTouch[] = [];
  const options: DoorOptions = {
    plan,
    active: () => true,
    onEffect: () => {},
    onEmulatorError: (touch) => seen.push(touch),
    callIdsIn,
    toolCallsTable: "tool-calls",
    quarantineBucket: "quarantine",
  };
  return { handle: dynamoDbDoor(options, counts), counts, seen };
}

/** One request through the door, as the proxy hands it over; `exchange` stands for the emulator's side. */
function proxied(
  body: object,
  exchange: () => Promise<UpstreamAnswer>,
): ProxiedCall & { response: ServerResponse } {
  const request = new IncomingMessage(new Socket());
  request.method = "POST";
  const response = new ServerResponse(request);
  const text = Buffer.from(JSON.stringify(body));
  return {
    request,
    response,
    body: text,
    target: "DynamoDB_20120810.PutItem",
    forward: () => Promise.reject(new Error("not used")),
    exchange,
    pass: () => Promise.reject(new Error("not used")),
    answer: () => {},
    answerJson: () => {},
  };
}

const putOf = (callId: string) => ({
  TableName: "tool-calls",
  Item: { callId: { S: callId }, version: { N: "3" }, status: { S: "completed" } },
});

describe("the doors record the emulators' own failures as incidents of the calls the request named", () => {
  it("records an exchange that failed (the connection to the emulator reset) and passes the failure on", async () => {
    const { handle, counts, seen } = door();
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    await expect(handle(proxied(putOf("job-7-335"), () => Promise.reject(reset)))).rejects.toBe(reset);

    expect(counts.emulatorErrors).toBe(1);
    expect(seen).toMatchObject([{ callIds: ["job-7-335"], what: "dynamodb", status: undefined }]);
  });

  it("records a 5xx the emulator answered, and still hands that answer to the caller", async () => {
    const { handle, counts, seen } = door();
    const call = proxied(putOf("fifo-7-12"), () =>
      Promise.resolve({ status: 503, headers: {}, body: Buffer.from("{}") }),
    );
    await handle(call);

    expect(call.response.statusCode).toBe(503);
    expect(counts).toMatchObject({ emulatorErrors: 1, dynamodbFaults: 0 });
    expect(seen).toMatchObject([{ callIds: ["fifo-7-12"], what: "dynamodb", status: 503 }]);
  });

  it("records nothing for an answer that is no failure: a 200, or a 400 (a condition that did not hold)", async () => {
    const { handle, counts, seen } = door();
    for (const status of [200, 400])
      await handle(
        proxied(putOf("job-7-1"), () => Promise.resolve({ status, headers: {}, body: Buffer.from("{}") })),
      );

    expect(counts.emulatorErrors).toBe(0);
    expect(seen).toEqual([]);
  });
});
