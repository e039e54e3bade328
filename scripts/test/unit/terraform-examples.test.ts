// The modules' examples (terraform/modules/<module>/examples/<example>), read without Terraform: each is a
// root a user can copy, and every module it calls gets each required input and nothing the module does not
// declare. `npm run tf:check` runs `terraform validate` on each as well (tools/terraform/src/tf-check/examples.ts);
// this catches the same drift in `npm test`, where no provider is at hand.
import { readdir, readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { body, type HclConfig, names, parseDirectory, TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import { beforeAll, describe, expect, it } from "vitest";
import { moduleExamples } from "../../../tools/terraform/src/tf-check/examples.ts";

const modulesDir = join(TERRAFORM_ROOT, "modules");
/** The modules a user composes an environment from: each must show how it is called. */
const COPIED_FROM = ["function", "kinesis-esm", "pipeline", "queue", "sqs-esm"];
/** Arguments of a module block that are Terraform's, not the module's variables. */
const META_ARGUMENTS = new Set(["source", "version", "providers", "depends_on", "count", "for_each"]);

let examples: string[] = [];
beforeAll(async () => {
  examples = await moduleExamples(modulesDir);
});

/** What a module block passes that its module does not declare, and the required inputs it leaves out. */
function inputMismatches(call: Record<string, unknown>, module: HclConfig): string[] {
  const declared = names(module, "variable");
  const required = declared.filter((v) => !("default" in (body(module, "variable", v) ?? {})));
  const passed = Object.keys(call).filter((k) => !META_ARGUMENTS.has(k));
  return [
    ...required.filter((v) => !passed.includes(v)).map((v) => `missing required input ${v}`),
    ...passed.filter((a) => !declared.includes(a)).map((a) => `unknown input ${a}`),
  ];
}

describe("module examples", () => {
  it("every module a user copies from has at least one", () => {
    const withExamples = new Set(examples.map((e) => e.split("/")[0]));
    expect(COPIED_FROM.filter((m) => !withExamples.has(m))).toEqual([]);
  });

  it("each is a root with main.tf, versions.tf and a README, linked from its module's README", async () => {
    const problems: string[] = [];
    for (const example of examples) {
      const files = await readdir(join(modulesDir, example));
      for (const f of ["main.tf", "versions.tf", "README.md"])
        if (!files.includes(f)) problems.push(`${example}: no ${f}`);
      const [module, , name] = example.split("/");
      const readme = await readFile(join(modulesDir, module as string, "README.md"), "utf8");
      if (!readme.includes(`(examples/${name}/)`))
        problems.push(`${module}/README.md: no link to ${example}`);
    }
    expect(problems).toEqual([]);
  });

  it("each calls its own module, and every module it calls gets exactly the inputs that module declares", async () => {
    const problems: string[] = [];
    for (const example of examples) {
      const dir = join(modulesDir, example);
      const config = await parseDirectory(dir);
      const calls = names(config, "module").map((name) => ({
        name,
        call: body(config, "module", name) ?? {},
      }));
      if (!calls.some(({ call }) => call.source === "../.."))
        problems.push(`${example}: no module block with source = "../.."`);
      for (const { name, call } of calls) {
        const module = await parseDirectory(resolve(dir, String(call.source)));
        for (const m of inputMismatches(call, module)) problems.push(`${example}: module.${name}: ${m}`);
      }
      if (!names(config, "provider").includes("aws")) problems.push(`${example}: no provider "aws" block`);
    }
    expect(problems).toEqual([]);
  });

  it("inputMismatches names a missing required input and an undeclared one", async () => {
    const queue = await parseDirectory(join(modulesDir, "queue"));
    expect(inputMismatches({ source: "../..", name: "jobs", visibilty_timeout_seconds: 30 }, queue)).toEqual([
      "missing required input visibility_timeout_seconds",
      "unknown input visibilty_timeout_seconds",
    ]);
    expect(inputMismatches({ source: "../..", name: "jobs", visibility_timeout_seconds: 30 }, queue)).toEqual(
      [],
    );
  });
});
