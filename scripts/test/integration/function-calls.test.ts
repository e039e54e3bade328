// The half of the permission check that needs no Terraform (issue 25 item 9): each function is bundled as
// `npm run build` bundles it, the AWS calls its code can make are read from the bundle's metafile
// (tools/terraform/src/tf-check/permissions/sdk-calls.ts), and each must be placed on the resources it acts on
// (code-targets.ts) with the IAM actions it needs (iam-actions.ts). A new call fails here, in npm test;
// whether each function's role allows exactly these is checked after apply (npm run tf:check).
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { bundleAll } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { placeCalls } from "../../../tools/terraform/src/tf-check/permissions/function-permissions.ts";
import {
  type BundleCalls,
  functionCalls,
} from "../../../tools/terraform/src/tf-check/permissions/sdk-calls.ts";

const FUNCTIONS = ["processor", "tool-worker", "fifo-worker", "dlq-redrive"] as const;
const root = join(import.meta.dirname, "../../..");
let dist: string;
const calls = new Map<string, BundleCalls>();

beforeAll(async () => {
  dist = await bundleAll([...FUNCTIONS]);
  for (const name of FUNCTIONS) calls.set(name, await functionCalls(root, dist, name));
}, 300_000);
afterAll(async () => {
  if (dist) await rm(dist, { recursive: true, force: true });
});

const operations = (name: string) => (calls.get(name)?.calls ?? []).map((c) => c.operation);

describe("every AWS call a bundle can make is placed on its resources, with its IAM actions", () => {
  it.each(FUNCTIONS)("%s", (name) => {
    const { placed, problems } = placeCalls(name, calls.get(name) as BundleCalls);
    expect(problems).toEqual([]);
    expect(placed.length).toBeGreaterThan(0);
  });
});

describe("what the bundles are read to call (the witnesses of issue 25 items 9 and 11)", () => {
  it("dlq-redrive's dry-run redrive changes message visibility, on the workers' DLQs", () => {
    const { placed } = placeCalls("dlq-redrive", calls.get("dlq-redrive") as BundleCalls);
    expect(placed.filter((p) => p.operation === "sqs:ChangeMessageVisibilityBatch")).toEqual([
      expect.objectContaining({
        module: "packages/recovery/src/peek-messages.ts",
        on: [{ kind: "redrive", side: "dlq", consumers: ["tool-worker", "fifo-worker"] }],
      }),
    ]);
  });

  it("the workers put records in batches only, and the tool-calls table is read and put, never updated or deleted", () => {
    for (const name of ["tool-worker", "fifo-worker"]) {
      expect(operations(name)).toContain("kinesis:PutRecords");
      expect(operations(name)).not.toContain("kinesis:PutRecord");
      const { placed } = placeCalls(name, calls.get(name) as BundleCalls);
      const onToolCalls = placed
        .filter((p) => p.on.some((t) => t.kind === "table" && t.env === "TOOL_CALLS_TABLE"))
        .map((p) => p.operation);
      expect(new Set(onToolCalls)).toEqual(
        new Set(["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem"]),
      );
    }
  });

  it("the quarantine is never rewritten in place: no CopyObject, no DeleteObject in any bundle", () => {
    for (const name of FUNCTIONS) {
      expect(operations(name), name).not.toContain("s3:CopyObject");
      expect(operations(name), name).not.toContain("s3:DeleteObject");
    }
  });
});
