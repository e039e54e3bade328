/**
 * npm start runs what the build made, as Lambda would (issue 26, items 12 and 13), driven as an operator
 * runs it (its entry with `--dist`, in a child process):
 * - the handler and runtime come from dist/manifest.json: a handler the bundle does not export fails
 *   there as it would on Lambda (Runtime.HandlerNotFound, logged as the runtime logs it), a runtime this
 *   Node cannot stand for and a zip changed since the build are refused in one line;
 * - a forced overload (a tool-worker whose handler outlasts every timeout) ends with a summary and a
 *   report that say the run is not representative, why and what to pass, and a run out of time shows
 *   "not judged", never a "0 lost" tile.
 */
import { copyFile, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { KinesisClient, PutRecordCommand } from "@aws-sdk/client-kinesis";
import { artifactOf, deterministicZip, type Manifest, manifestJson } from "@mcp-pipeline/bundler";
import { CURRENT_SPEC_VERSION, encodeLifecycleEvent } from "@mcp-pipeline/contracts";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { childEnvironment, leftovers, startEntry, until } from "../command.js";

let dist: string;
let tmp: string;
beforeAll(async () => {
  dist = await bundleAll();
  tmp = await mkdtemp(join(tmpdir(), "npm-start-packages-"));
}, 300_000);
afterAll(async () => {
  await rm(dist, { recursive: true, force: true });
  await rm(tmp, { recursive: true, force: true });
});

/** A copy of the built dist with `change` applied to its manifest (and zips replaced, if given). */
async function distWith(
  change: (manifest: { artifacts: Record<string, Record<string, unknown>> }) => void,
  zips: Readonly<Record<string, Buffer>> = {},
): Promise<string> {
  const copy = await mkdtemp(join(tmp, "dist-"));
  const manifest = JSON.parse(await readFile(join(dist, "manifest.json"), "utf8")) as Manifest;
  const artifacts: Record<string, Record<string, unknown>> = Object.fromEntries(
    Object.entries(manifest.artifacts).map(([name, a]) => [name, { ...a }]),
  );
  for (const name of Object.keys(artifacts)) {
    const zip = zips[name];
    if (zip) {
      await writeFile(join(copy, `${name}.zip`), zip);
      artifacts[name] = { ...artifactOf(zip, `dist/${name}.zip`) };
    } else await copyFile(join(dist, `${name}.zip`), join(copy, `${name}.zip`));
  }
  const edited = { artifacts };
  change(edited);
  await writeFile(join(copy, "manifest.json"), manifestJson(edited.artifacts as never));
  return copy;
}

describe("the handler and runtime of dist/manifest.json", () => {
  it("a handler the bundle does not export fails every invocation, as on Lambda, logged as the runtime logs it", async () => {
    const changed = await distWith((m) => {
      (m.artifacts.processor as Record<string, unknown>).handler = "index.main";
    });
    const command = startEntry(["--serve", "--verbose", "--dist", changed], childEnvironment(tmp));
    try {
      const env = await command.ready;
      const client = {
        region: env.AWS_REGION as string,
        credentials: { accessKeyId: "local", secretAccessKey: "local" },
      };
      // HTTP/1.1, as the other served-stack tests: kinesalite speaks no HTTP/2.
      const kinesis = new KinesisClient({
        ...client,
        endpoint: env.AWS_ENDPOINT_URL_KINESIS as string,
        requestHandler: new NodeHttpHandler(),
      });
      await kinesis.send(
        new PutRecordCommand({
          StreamName: env.STREAM_NAME,
          PartitionKey: "s1",
          Data: new TextEncoder().encode(
            encodeLifecycleEvent({
              specVersion: CURRENT_SPEC_VERSION,
              type: "tool_call.requested",
              eventId: "handler-event-1",
              callId: "handler-call-1",
              sessionId: "s1",
              tool: "text.stats",
              occurredAt: new Date().toISOString(),
              argumentsDigest: "0".repeat(64),
            }),
          ),
        }),
      );
      kinesis.destroy();
      // The init error as the runtime logs it in the JSON format, shown by --verbose (an ERROR line).
      const line = await until("the processor's init error in the log", () =>
        command
          .stderr()
          .split("\n")
          .find((l) => l.startsWith("mcp-dev-processor: {") && l.includes("HandlerNotFound")),
      );
      const logged = JSON.parse(line.slice("mcp-dev-processor: ".length));
      expect(logged).toMatchObject({
        level: "ERROR",
        message: { errorType: "HandlerNotFound", errorMessage: "index.main is undefined or not exported" },
      });
      const dynamodb = new DynamoDBClient({ ...client, endpoint: env.AWS_ENDPOINT_URL_DYNAMODB as string });
      const { Item } = await dynamodb.send(
        new GetItemCommand({ TableName: env.TOOL_CALLS_TABLE, Key: { callId: { S: "handler-call-1" } } }),
      );
      dynamodb.destroy();
      expect(Item).toBeUndefined();
    } finally {
      command.child.kill("SIGINT");
      await command.exited;
    }
    expect(await leftovers(tmp)).toEqual([]);
  }, 300_000);

  it.each([
    [
      "a runtime this Node cannot stand for",
      (m: { artifacts: Record<string, Record<string, unknown>> }) => {
        (m.artifacts["fifo-worker"] as Record<string, unknown>).runtime = "nodejs20.x";
      },
      /^fifo-worker's runtime in dist\/manifest\.json is nodejs20\.x, and this is Node 22\.\S+ \(nodejs22\.x\)/,
    ],
    [
      "a zip changed since the build",
      (m: { artifacts: Record<string, Record<string, unknown>> }) => {
        (m.artifacts["tool-worker"] as Record<string, unknown>).sha256 = "AAAA";
      },
      /tool-worker\.zip is not the zip dist\/manifest\.json names .*: it changed after the build; run `npm run build`$/,
    ],
  ])(
    "%s is refused in one line, exit 1, nothing left behind",
    async (_what, change, message) => {
      const command = startEntry(["--dist", await distWith(change), "--no-report"], childEnvironment(tmp));
      const { code } = await command.exited;
      expect(code).toBe(1);
      expect(command.stderr().trim()).toMatch(message);
      expect(command.stderr()).not.toMatch(/\n\s+at /);
      expect(await leftovers(tmp)).toEqual([]);
    },
    300_000,
  );
});

/** A tool-worker whose handler outlasts any timeout: a forced overload, whatever the machine's load. */
const SLOW_WORKER = deterministicZip([
  {
    name: "index.mjs",
    content: Buffer.from(
      "export const handler = () => new Promise((resolve) => setTimeout(resolve, 600_000));\n",
    ),
  },
]);

describe("a run dominated by timeouts (a forced overload)", () => {
  const OVERLOAD = [
    ...["--time-scale", "100", "--events", "20", "--jobs", "10", "--fifo-jobs", "0", "--sessions", "2"],
    ...["--poison-rate", "0", "--stuck-rate", "0", "--transient-rate", "0"],
  ];

  it("says in the summary and the report that it is not representative, why and what to pass", async () => {
    const slow = await distWith(() => {}, { "tool-worker": await SLOW_WORKER });
    const report = join(tmp, "overload.html");
    const command = startEntry(
      ["--dist", slow, ...OVERLOAD, "--timeout", "600", "--report", report],
      childEnvironment(tmp),
    );
    const { code } = await command.exited;
    const out = command.stdout();
    // Every tool job timed out on every receive and went to the DLQ: kept, so nothing is lost (exit 0); on
    // a machine too busy even for that, the run ends out of time (exit 3), judged as such below.
    expect([0, 3], command.stderr()).toContain(code);
    expect(out).toMatch(/^NOT REPRESENTATIVE: timeouts dominated this run/m);
    expect(out).toMatch(/- (\d+) of \1 tool-worker invocations timed out at 0\.30 s \(its 30 s ÷ 100\)/);
    expect(out).toContain("durations ÷100 are too short for this machine's load: pass --time-scale 20");
    const html = await readFile(report, "utf8");
    expect(html).toContain('id="representative"');
    expect(html).not.toContain('class="verdict ok"');
    if (code === 0) {
      expect(out).toMatch(/^lost\s+0\s+inputs found nowhere/m);
      expect(out).toMatch(/10 of 10 jobs ended in the DLQs, only 0 of them poison/);
    } else {
      expect(out).toMatch(/^lost\s+not judged: timed out with \d+ inputs in flight/m);
    }
  }, 900_000);

  it("out of time, the summary and the report say 'not judged', never '0 lost', exit 3", async () => {
    const slow = await distWith(() => {}, { "tool-worker": await SLOW_WORKER });
    const report = join(tmp, "timed-out.html");
    // Two seconds: the jobs need five receives, two seconds apart at least, to reach the DLQ.
    const command = startEntry(
      ["--dist", slow, ...OVERLOAD, "--timeout", "2", "--report", report],
      childEnvironment(tmp),
    );
    const { code } = await command.exited;
    expect(code, command.stderr()).toBe(3);
    expect(command.stdout()).toMatch(
      /^lost\s+not judged: timed out with \d+ inputs in flight\s+raise --timeout/m,
    );
    expect(command.stdout()).not.toMatch(/^lost\s+0/m);
    const html = await readFile(report, "utf8");
    expect(html).toMatch(/<div class="value">not judged<\/div><div class="label">lost<\/div>/);
    expect(html).not.toMatch(/<div class="value">0<\/div><div class="label">lost<\/div>/);
    expect(html).toContain("not judged (not loss");
  }, 900_000);
});
