import { spawn } from "node:child_process";
import { join } from "node:path";
import { SendMessageCommand } from "@aws-sdk/client-sqs";
import { sqsClient } from "@mcp-pipeline/aws/sqs-client";
import { EmulatorStack, emulatorClientOptions, type StackQueue } from "@mcp-pipeline/emulators";
import { countMessages } from "@mcp-pipeline/recovery";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { redrivablePair, stackEnvironment } from "../run-recover.js";

/**
 * The confirmation at a terminal (issue 26, item 3): `npm run recover`'s entry (bin/recover.ts) under a
 * pseudo-terminal (util-linux `script`), as a person runs it. It shows the plan, asks, and acts only on yes.
 */
const root = join(import.meta.dirname, "../../../..");
const bin = join(root, "node_modules/.bin");
let stack: EmulatorStack;

/** Runs the command in a pty; answers `answer` once the question is on the screen. */
function atTerminal(args: readonly string[], env: Record<string, string>, answer: string) {
  const command = [join(bin, "tsx"), join(root, "tools/recovery-cli/bin/recover.ts"), ...args]
    .map((a) => `'${a}'`)
    .join(" ");
  return new Promise<{ code: number | null; screen: string }>((resolve, reject) => {
    const child = spawn("script", ["-qec", command, "/dev/null"], {
      env: { PATH: `${bin}:${process.env.PATH}`, HOME: process.env.HOME ?? "/tmp", TERM: "dumb", ...env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let screen = "";
    let answered = false;
    const read = (chunk: Buffer) => {
      screen += chunk.toString("utf8");
      if (!answered && screen.includes("Type yes to go on:")) {
        answered = true;
        child.stdin.write(`${answer}\n`);
      }
    };
    child.stdout.on("data", read);
    child.stderr.on("data", read);
    child.on("error", reject);
    child.on("exit", (code) => resolve({ code, screen }));
  });
}

async function dlqWithOneJob(name: string): Promise<Required<StackQueue>> {
  const q = await redrivablePair(stack, name);
  const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
  await sqs.send(new SendMessageCommand({ QueueUrl: q.dlqUrl, MessageBody: "a job" }));
  sqs.destroy();
  return q;
}

beforeAll(async () => {
  stack = await EmulatorStack.start({ sqsS3: true });
});
afterAll(() => stack?.stop());

describe("npm run recover at a terminal", () => {
  it("asks after the plan; yes moves the messages", async () => {
    const q = await dlqWithOneJob("tty-yes");
    const run = await atTerminal(
      ["redrive", "--from", q.dlqUrl, "--watch", "0"],
      stackEnvironment(stack),
      "yes",
    );
    expect(run.screen).toContain("1 to move");
    expect(run.screen).toMatch(/Move 1 message from tty-yes-dlq to tty-yes\? Type yes to go on:/);
    expect(run.screen).toMatch(/1 moved back to tty-yes \(mover\)/);
    expect(run.code).toBe(0);
    const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
    expect(await countMessages(sqs, q.url)).toBe(1);
    sqs.destroy();
  }, 120_000);

  it("Ctrl-C at the question does nothing and exits 3, as a no does (not a failure, exit 1)", async () => {
    const q = await dlqWithOneJob("tty-ctrl-c");
    const run = await atTerminal(["redrive", "--from", q.dlqUrl], stackEnvironment(stack), "\u0003");
    expect(run.screen).toContain("nothing done: not confirmed");
    expect(run.screen).not.toContain("AbortError");
    expect(run.code).toBe(3);
    const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
    expect(await countMessages(sqs, q.dlqUrl)).toBe(1);
    sqs.destroy();
  }, 120_000);

  it("anything but yes does nothing and exits 3", async () => {
    const q = await dlqWithOneJob("tty-no");
    const run = await atTerminal(["redrive", "--from", q.dlqUrl], stackEnvironment(stack), "no");
    expect(run.screen).toContain("nothing done: not confirmed");
    expect(run.code).toBe(3);
    const sqs = sqsClient(emulatorClientOptions(stack.sqsS3));
    expect(await countMessages(sqs, q.dlqUrl)).toBe(1);
    sqs.destroy();
  }, 120_000);
});
