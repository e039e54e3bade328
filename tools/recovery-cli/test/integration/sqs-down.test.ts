import { createServer } from "node:net";
import { EmulatorStack } from "@mcp-pipeline/emulators";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { recover, stackEnvironment } from "../run-recover.js";

/**
 * `status` and `triage` when SQS does not answer (the endpoint down), STS still up: status said
 * `Error: connect ECONNREFUSED 127.0.0.1:N` and exit 1, naming neither the service nor what it could not
 * tell. It now shows each queue as not read, says which endpoint did not answer once, and exits 4 (a
 * person is needed); any other command names the service and the endpoint in its one line.
 */
let stack: EmulatorStack;
let env: Record<string, string>;
let down: string;

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true });
  await stack.createBucket("mcp-dev-quarantine");
  down = `http://127.0.0.1:${await closedPort()}`;
  const queue = (name: string) => `${down}/000000000000/${name}`;
  env = stackEnvironment(stack, {
    AWS_ENDPOINT_URL_SQS: down,
    STREAM_NAME: "mcp-dev-events",
    QUARANTINE_BUCKET: "mcp-dev-quarantine",
    TOOL_JOBS_QUEUE_URL: queue("mcp-dev-tool-jobs"),
    TOOL_JOBS_DLQ_URL: queue("mcp-dev-tool-jobs-dlq"),
    SESSION_JOBS_QUEUE_URL: queue("mcp-dev-session-jobs.fifo"),
    SESSION_JOBS_DLQ_URL: queue("mcp-dev-session-jobs-dlq.fifo"),
    STREAM_FAILURES_QUEUE_URL: queue("mcp-dev-stream-failures"),
    STREAM_FAILURES_DLQ_URL: queue("mcp-dev-stream-failures-dlq"),
  });
});
afterAll(() => stack?.stop());

describe("SQS down", () => {
  it("status shows every queue as not read, says where once, and exits 4", async () => {
    const run = await recover(["status"], env);
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toContain("account 000000000000");
    expect(run.out).toContain("  tool-jobs queue: not read\n  tool-jobs DLQ: not read\n");
    expect(run.out).toContain(
      `attention:\n  - 6 queues were not read (SQS at ${down} did not answer (ECONNREFUSED): is the stack running, and AWS_ENDPOINT_URL_SQS right?): their depth and age are unknown`,
    );
    expect(run.out).toContain(`stuck FIFO groups: n/a (the FIFO queue was not read: SQS at ${down}`);
    const json = await recover(["status", "--json"], env);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.out).unread).toHaveLength(6);
  });

  it("triage shows what it could read and names each DLQ it could not, with the endpoint (exit 4)", async () => {
    const run = await recover(["triage"], env);
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toContain(
      "nothing waits in what was read; some was not read (below): what waits there is unknown",
    );
    for (const dlq of ["tool-jobs", "session-jobs", "stream-failures"])
      expect(run.out).toContain(
        `not read: ${dlq} DLQ: SQS at ${down} did not answer (ECONNREFUSED): is the stack running, and AWS_ENDPOINT_URL_SQS right?`,
      );
  });

  it("any other command names the service and the endpoint that did not answer, in one line (exit 1)", async () => {
    const run = await recover(["peek", "--queue", "tool-jobs"], env);
    expect(run.code).toBe(1);
    expect(run.err.trim()).toBe(
      `SQS at ${down} did not answer (ECONNREFUSED): nothing was changed by this request; is the stack running, and are AWS_ENDPOINT_URL_* right?`,
    );
  });
});

describe("triage of what is not there", () => {
  it("a quarantine bucket that is not there: the DLQs are still shown, the bucket named, exit 4 (not 1)", async () => {
    const run = await recover(
      ["triage"],
      stackEnvironment(stack, { QUARANTINE_BUCKET: "no-such-quarantine" }),
    );
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toMatch(/^not read: quarantine s3:\/\/no-such-quarantine: NoSuchBucket/m);
    expect(run.out).toContain(
      "not read: tool-jobs DLQ: set TOOL_JOBS_QUEUE_URL and TOOL_JOBS_DLQ_URL (or STREAM_NAME / --prefix, to find them by name)",
    );
  });

  it("DLQs it has no way to find are not 'nothing waits': exit 4, each named", async () => {
    const run = await recover(
      ["triage"],
      stackEnvironment(stack, { QUARANTINE_BUCKET: "mcp-dev-quarantine" }),
    );
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).not.toContain("nothing waits: the quarantine and the DLQs hold nothing");
    expect(run.out).toContain(
      "not read: session-jobs DLQ: set SESSION_JOBS_QUEUE_URL and SESSION_JOBS_DLQ_URL",
    );
  });
});

describe("status of what it cannot see", () => {
  it("queues it has no way to find are not 'nothing needs a person': exit 4, each named", async () => {
    const run = await recover(["status"], stackEnvironment(stack));
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toContain(
      "  - 3 queues (with their DLQs) were not found (tool-jobs: set TOOL_JOBS_QUEUE_URL and TOOL_JOBS_DLQ_URL",
    );
  });

  it("CloudWatch that does not answer: the ages, the lag and the alarms are unknown, exit 4", async () => {
    const prefix = "mcp-cw";
    for (const [name, fifo] of [
      ["tool-jobs", false],
      ["session-jobs", true],
      ["stream-failures", false],
    ] as const)
      await stack.createQueue({
        name: `${prefix}-${name}${fifo ? ".fifo" : ""}`,
        ...(fifo ? { sharedAttributes: { FifoQueue: "true" } } : {}),
        dlq: { name: `${prefix}-${name}-dlq${fifo ? ".fifo" : ""}`, maxReceiveCount: 3 },
      });
    const run = await recover(
      ["status", "--prefix", prefix],
      stackEnvironment(stack, { AWS_ENDPOINT_URL_CLOUDWATCH: down }),
    );
    expect(run.code, run.out + run.err).toBe(4);
    expect(run.out).toContain(
      `  - CloudWatch was not read (CLOUDWATCH at ${down} did not answer (ECONNREFUSED): is the stack running, and AWS_ENDPOINT_URL_CLOUDWATCH right?): the queues' oldest ages, the processor's lag and the alarms in ALARM are unknown`,
    );
  });
});
