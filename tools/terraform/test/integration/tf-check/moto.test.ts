// moto's server as tf:check starts it: one per root, side by side, each on the port the kernel gave it.
// Integration: moto's server on 127.0.0.1 (installed by .ci/moto.sh).
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { CreateQueueCommand, ListQueuesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, describe, expect, it } from "vitest";
import { listeningPort, type Moto, startMoto } from "../../../src/tf-check/moto.ts";

describe("listeningPort", () => {
  it("reads the port from werkzeug's startup line, colours and all", () => {
    const log =
      "\u001b[31m\u001b[1mWARNING: This is a development server.\u001b[0m\n * Running on http://127.0.0.1:40643\n\u001b[33mPress CTRL+C to quit\u001b[0m\n";
    expect(listeningPort(log)).toBe(40643);
  });

  it("gives nothing before the line has been printed, or for another host", () => {
    expect(listeningPort("")).toBeNull();
    expect(listeningPort(" * Running on http://127.0.0.1:")).toBeNull();
    expect(listeningPort(" * Running on http://0.0.0.0:5000")).toBeNull();
  });
});

describe("startMoto", () => {
  const started: Moto[] = [];
  afterAll(async () => {
    await Promise.all(started.map((m) => m.stop()));
  });

  it("starts servers side by side, each on its own port with its own account", async () => {
    // .ci/moto.sh installs moto's server on first use (about 45 s), then only prints its path.
    const server = execFileSync("bash", [join(import.meta.dirname, "../../../../../.ci/moto.sh")], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop() as string;
    const [a, b, c] = await Promise.all([startMoto(server), startMoto(server), startMoto(server)]);
    started.push(a, b, c);
    expect(new Set([a.endpoint, b.endpoint, c.endpoint]).size).toBe(3);
    for (const m of [a, b, c]) expect(m.endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const credentials = { accessKeyId: "test", secretAccessKey: "test" };
    const [sqsA, sqsB] = [a, b].map(
      (m) => new SQSClient({ region: "eu-west-1", endpoint: m.endpoint, credentials }),
    );
    await sqsA?.send(new CreateQueueCommand({ QueueName: "only-in-a" }));
    const inA = await sqsA?.send(new ListQueuesCommand({}));
    const inB = await sqsB?.send(new ListQueuesCommand({}));
    sqsA?.destroy();
    sqsB?.destroy();
    expect(inA?.QueueUrls?.some((u) => u.endsWith("/only-in-a"))).toBe(true);
    expect(inB?.QueueUrls ?? []).toEqual([]);
  }, 300_000);

  it("fails with a MotoError when the server exits before saying its port", async () => {
    await expect(startMoto("/bin/false")).rejects.toMatchObject({
      name: "MotoError",
      message: "moto_server exited before answering",
    });
  });
});
