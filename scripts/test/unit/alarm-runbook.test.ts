// biome-ignore-all lint/suspicious/noTemplateCurlyInString: these strings are Terraform interpolations as main.tf writes them, not JavaScript templates.
// Every alarm says what to run and where to read on (issue 26, item 9): the command in its description is
// one `npm run recover` takes, and the link's anchor is a section of docs/operations.md. terraform test
// (modules/alarms/tests) checks the descriptions as Terraform renders them; this checks what they say.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readCommandLine } from "@mcp-pipeline/recovery-cli";
import { type HclConfig, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import { beforeAll, describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "../../..");

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\w\- ]/g, "")
    .replace(/ /g, "-");

const runbookAnchors = (): Set<string> =>
  new Set(
    [...readFileSync(join(root, "docs/operations.md"), "utf8").matchAll(/^#{1,6} (.+)$/gm)].map((m) =>
      anchorOf(m[1] as string),
    ),
  );

/** Sample values for the interpolations a description's command holds. */
const SAMPLES: Readonly<Record<string, string>> = {
  "${local.prefix}": "--prefix mcp-test",
  "${each.key}": "tool-jobs",
};

/** What is wrong with one alarm's description (as written in main.tf), if anything. */
function descriptionProblems(description: string, anchors: ReadonlySet<string>): string[] {
  const parts = /Run: \$\{local\.recover\} (.+)\. Runbook: \$\{local\.runbook\}([a-z0-9-]+)$/.exec(
    description,
  );
  if (parts === null)
    return ["does not end with `Run: ${local.recover} <command>. Runbook: ${local.runbook}<anchor>`"];
  const [, command = "", anchor = ""] = parts;
  const problems: string[] = [];
  let argv = command;
  for (const [interpolation, sample] of Object.entries(SAMPLES))
    argv = argv.replaceAll(interpolation, sample);
  if (argv.includes("${"))
    problems.push(`the command holds an interpolation this test cannot fill: ${command}`);
  else {
    try {
      const line = readCommandLine(argv.split(" "));
      if (line.help) problems.push(`the command only prints the usage: ${command}`);
    } catch (error) {
      problems.push(`npm run recover refuses "${argv}": ${(error as Error).message}`);
    }
  }
  if (!anchors.has(anchor)) problems.push(`docs/operations.md has no section #${anchor}`);
  return problems;
}

let alarms: HclConfig;
beforeAll(async () => {
  alarms = await parseDirectory(join(TERRAFORM_ROOT, "modules", "alarms"));
});

const metricAlarms = () =>
  Object.entries(
    (alarms.resource as Record<string, Record<string, { alarm_description?: string }[]>>)
      .aws_cloudwatch_metric_alarm ?? {},
  ).map(([name, [block]]) => [name, block?.alarm_description ?? ""] as const);

describe("every alarm's description carries the command to run and its runbook section", () => {
  it("the descriptions' region, prefix and link are the module's own", () => {
    // The module has more than one locals block: the one that names the descriptions' parts.
    const locals = (alarms.locals as Record<string, string>[]).find((block) => "recover" in block);
    expect(locals).toMatchObject({
      recover: "AWS_REGION=${var.region} npm run recover --",
      prefix: "--prefix ${var.name_prefix}",
      runbook: "${var.runbook_url}#",
    });
  });

  it("each alarm's command is one npm run recover takes, and its anchor a section of docs/operations.md", () => {
    const anchors = runbookAnchors();
    const found = metricAlarms();
    expect(found.length).toBe(10);
    for (const [name, description] of found)
      expect(descriptionProblems(description, anchors), name).toEqual([]);
  });

  it("each section of docs/operations.md is there once, so that an anchor names one section", () => {
    const headings = [
      ...readFileSync(join(root, "docs/operations.md"), "utf8").matchAll(/^#{1,6} (.+)$/gm),
    ].map((m) => anchorOf(m[1] as string));
    expect(headings.filter((anchor, i) => headings.indexOf(anchor) !== i)).toEqual([]);
  });

  it("the check fails for a command the CLI refuses, a missing section, or no command at all", () => {
    const anchors = runbookAnchors();
    expect(
      descriptionProblems(
        "Lag. Run: ${local.recover} status --list ${local.prefix}. Runbook: ${local.runbook}processor-iterator-age",
        anchors,
      ),
    ).toEqual([
      'npm run recover refuses "status --list --prefix mcp-test": --list is for inspect, not status',
    ]);
    expect(
      descriptionProblems(
        "Lag. Run: ${local.recover} status ${local.prefix}. Runbook: ${local.runbook}no-such-section",
        anchors,
      ),
    ).toEqual(["docs/operations.md has no section #no-such-section"]);
    expect(descriptionProblems("Lag. See docs/operations.md.", anchors)).toHaveLength(1);
  });
});
