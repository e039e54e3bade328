// What sdk-calls.ts reads from a bundle's metafile (issue 25 item 9): one module per SDK command is an
// operation the code can send. A client that reaches the bundle in a form with no such modules (its
// CommonJS build, every command in one file) must be a finding, not a bundle that calls nothing.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeCalls } from "../../../src/tf-check/permissions/function-permissions.ts";
import { bundleCalls, type Metafile } from "../../../src/tf-check/permissions/sdk-calls.ts";

let root: string;
const bundleDir = () => join(root, "functions", "dlq-redrive");
const SENDER = "../../packages/aws/src/sqs-client.ts";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "sdk-calls-"));
  await mkdir(join(root, "packages", "aws", "src"), { recursive: true });
  await mkdir(bundleDir(), { recursive: true });
  await writeFile(
    join(root, "packages", "aws", "src", "sqs-client.ts"),
    "export const send = (c, url, body) => c.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));\n",
  );
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

const meta = (inputs: string[]): Metafile => ({
  outputs: {
    "dist/index.mjs": { inputs: Object.fromEntries(inputs.map((i) => [i, { bytesInOutput: 10 }])) },
  },
});

describe("bundleCalls", () => {
  it("reads a command module of the ES build as a call of the module that constructs it", async () => {
    const calls = await bundleCalls(
      meta([
        SENDER,
        "../../node_modules/@aws-sdk/client-sqs/dist-es/SQSClient.js",
        "../../node_modules/@aws-sdk/client-sqs/dist-es/commands/SendMessageCommand.js",
      ]),
      bundleDir(),
      root,
    );
    expect(calls).toEqual({
      calls: [{ operation: "sqs:SendMessage", modules: ["packages/aws/src/sqs-client.ts"] }],
      unattributed: [],
      unreadable: [],
    });
  });

  it("a client bundled from its CommonJS build is unreadable, and a finding", async () => {
    const calls = await bundleCalls(
      meta([SENDER, "../../node_modules/@aws-sdk/client-sqs/dist-cjs/index.js"]),
      bundleDir(),
      root,
    );
    expect(calls.calls).toEqual([]);
    expect(calls.unreadable).toEqual(["@aws-sdk/client-sqs (dist-cjs/index.js)"]);
    expect(placeCalls("dlq-redrive", calls).problems).toContain(
      "its bundle holds @aws-sdk/client-sqs (dist-cjs/index.js) without a module per command (a CommonJS build or an aggregated client): which calls it sends cannot be read",
    );
  });

  it("a client class without any command module is unreadable", async () => {
    const calls = await bundleCalls(
      meta([SENDER, "../../node_modules/@aws-sdk/client-s3/dist-es/S3Client.js"]),
      bundleDir(),
      root,
    );
    expect(calls.unreadable).toEqual(["@aws-sdk/client-s3"]);
  });

  it("an error class of a client (no client, no command) is no call", async () => {
    const calls = await bundleCalls(
      meta([SENDER, "../../node_modules/@aws-sdk/client-dynamodb/dist-es/models/errors.js"]),
      bundleDir(),
      root,
    );
    expect(calls).toEqual({ calls: [], unattributed: [], unreadable: [] });
  });
});
