// The Terraform's hashicorp/aws types against the services of the provider build (.ci/aws-provider.sh).
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  checkServices,
  MANIFEST,
  ManifestError,
  type ProviderManifest,
  parseManifest,
  providerServices,
  typesIn,
  verdictMessage,
} from "../../../src/tf-check/provider-services.ts";
import { SERVICE_LIST } from "../../../src/tf-check/service-list.ts";

const manifest: ProviderManifest = {
  services: ["sqs", "logs"],
  types: {
    aws_sqs_queue: "sqs",
    aws_cloudwatch_log_group: "logs",
    aws_cloudwatch_metric_alarm: "cloudwatch",
    aws_ssm_parameter: "ssm",
  },
};

describe("parseManifest", () => {
  it("reads the services and the type map", () => {
    expect(parseManifest(JSON.stringify(manifest), "m.json")).toEqual(manifest);
  });

  it.each([
    ["not JSON", "{", /m\.json: not JSON; rebuild it with \.ci\/aws-provider\.sh/],
    ["no services", JSON.stringify({ types: {} }), /"services" is not a list/],
    ["services not strings", JSON.stringify({ services: [1], types: {} }), /"services" is not a list/],
    ["types a list", JSON.stringify({ services: [], types: [] }), /"types" is not an object/],
    ["a type without a service", JSON.stringify({ services: [], types: { aws_x: 1 } }), /"types"/],
  ])("refuses %s", (_, text, message) => {
    expect(() => parseManifest(text, "m.json")).toThrow(ManifestError);
    expect(() => parseManifest(text, "m.json")).toThrow(message);
  });
});

describe("typesIn", () => {
  it("finds resources, data sources, ephemeral resources and a test's mocks, once each, sorted", () => {
    const text = [
      'resource "aws_sqs_queue" "dlq" {}',
      '  resource "aws_sqs_queue" "main" {}',
      'data "aws_caller_identity" "current" {}',
      'ephemeral "aws_secretsmanager_secret_version" "s" {}',
      'mock_provider "aws" {',
      '  mock_data "aws_partition" {',
      "    defaults = {}",
      "  }",
      '  mock_resource "aws_kms_key" {}',
      "}",
    ].join("\n");
    expect(typesIn(text)).toEqual([
      "aws_caller_identity",
      "aws_kms_key",
      "aws_partition",
      "aws_secretsmanager_secret_version",
      "aws_sqs_queue",
    ]);
  });

  it("skips comments, modules, other providers' types and type names inside values", () => {
    const text = [
      '# resource "aws_ssm_parameter" "old" {}',
      '// data "aws_region" "r" {}',
      'module "queue" { source = "../queue" }',
      'resource "random_id" "x" {}',
      'resource "terraform_data" "y" {}',
      'output "o" { value = "resource \\"aws_iam_user\\"" }',
    ].join("\n");
    expect(typesIn(text)).toEqual([]);
  });
});

describe("checkServices", () => {
  const used = (entries: Record<string, string[]>) => new Map(Object.entries(entries));

  it("passes when every type's service is built", () => {
    const verdict = checkServices(
      used({ aws_sqs_queue: ["a.tf"], aws_cloudwatch_log_group: ["b.tf"] }),
      ["sqs", "logs"],
      manifest,
    );
    expect(verdict).toEqual({ kind: "ok", services: ["logs", "sqs"], types: 2 });
  });

  it("names each type of a service the build lacks, with its files and the service to add", () => {
    const verdict = checkServices(
      used({
        aws_ssm_parameter: ["m/main.tf"],
        aws_cloudwatch_metric_alarm: ["a.tf", "b.tf"],
        aws_sqs_queue: [],
      }),
      ["logs", "sqs"],
      manifest,
    );
    expect(verdict).toEqual({
      kind: "missing",
      missing: [
        { type: "aws_cloudwatch_metric_alarm", service: "cloudwatch", files: ["a.tf", "b.tf"] },
        { type: "aws_ssm_parameter", service: "ssm", files: ["m/main.tf"] },
      ],
    });
    const message = verdictMessage(verdict);
    expect(message).toContain(
      'aws_cloudwatch_metric_alarm (a.tf, b.tf): service "cloudwatch" is not in the build',
    );
    expect(message).toContain(
      `add "cloudwatch", "ssm" to ${SERVICE_LIST} (one a line) and run .ci/aws-provider.sh`,
    );
  });

  it("says that no service has a misspelt type, without telling the reader to add one", () => {
    const verdict = checkServices(used({ aws_sqs_queues_typo: ["q.tf"] }), ["logs", "sqs"], manifest);
    expect(verdict).toEqual({
      kind: "missing",
      missing: [{ type: "aws_sqs_queues_typo", service: null, files: ["q.tf"] }],
    });
    expect(verdictMessage(verdict)).toContain(
      "no service of hashicorp/aws has this type; check its spelling",
    );
    expect(verdictMessage(verdict)).not.toContain("add ");
  });

  it("refuses a build made from another list, before looking at the types", () => {
    const verdict = checkServices(used({ aws_ssm_parameter: ["m.tf"] }), ["logs", "sqs", "ssm"], manifest);
    expect(verdict).toEqual({ kind: "stale-build", built: ["logs", "sqs"], listed: ["logs", "sqs", "ssm"] });
    expect(verdictMessage(verdict)).toContain("run .ci/aws-provider.sh to build it again");
  });
});

describe("providerServices", () => {
  let tmp = "";
  afterEach(async () => {
    await rm(tmp, { recursive: true, force: true });
  });

  async function put(path: string, text: string): Promise<void> {
    await mkdir(dirname(join(tmp, path)), { recursive: true });
    await writeFile(join(tmp, path), text);
  }

  it("reads the list, the mirror's manifest and the Terraform and the check's fixtures, not .terraform", async () => {
    tmp = await mkdtemp(join(tmpdir(), "provider-services-"));
    await put(SERVICE_LIST, "sqs\nlogs\n");
    await put(join("mirror", MANIFEST), JSON.stringify(manifest));
    await put("terraform/modules/queue/main.tf", 'resource "aws_sqs_queue" "q" {}\n');
    await put(
      "terraform/modules/queue/tests/queue.tftest.hcl",
      'mock_provider "aws" {\n  mock_resource "aws_sqs_queue" {}\n}\n',
    );
    await put(
      "terraform/environments/dev/.terraform/modules/x/main.tf",
      'resource "aws_ssm_parameter" "p" {}\n',
    );
    await put(
      "tools/terraform/src/tf-check/fixtures/broken/main.tf",
      'resource "aws_cloudwatch_metric_alarm" "a" {}\n',
    );

    const verdict = await providerServices(tmp, join(tmp, "mirror"));
    expect(verdict).toEqual({
      kind: "missing",
      missing: [
        {
          type: "aws_cloudwatch_metric_alarm",
          service: "cloudwatch",
          files: [join("tools/terraform/src/tf-check/fixtures/broken/main.tf")],
        },
      ],
    });
  });

  it("gives null for a mirror without a manifest (a build not made by .ci/aws-provider.sh)", async () => {
    tmp = await mkdtemp(join(tmpdir(), "provider-services-"));
    await put(SERVICE_LIST, "sqs\n");
    await put("terraform/main.tf", 'resource "aws_sqs_queue" "q" {}\n');
    await mkdir(join(tmp, "mirror"));
    expect(await providerServices(tmp, join(tmp, "mirror"))).toBeNull();
  });
});
