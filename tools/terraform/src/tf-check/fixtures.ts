/**
 * Deliberately broken roots (tools/terraform/src/tf-check/fixtures/<name>/main.tf): the check passes only if
 * Terraform itself refuses each one, at init, validate or plan, with the error named here. A fixture that
 * Terraform accepts, or refuses for another reason, fails the check.
 */
import { cp, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { emulatorOverride, terraform, type Workspace } from "./terraform.ts";

export interface Fixture {
  readonly name: string;
  /** Terraform's own error, as it prints it. */
  readonly error: RegExp;
}

export const FIXTURES: readonly Fixture[] = [
  {
    name: "invalid-value",
    error: /Invalid value for variable[\s\S]*maximum_concurrency must be null or 2-1000\./,
  },
  {
    name: "missing-output",
    error: /Unsupported attribute[\s\S]*does not have an attribute named "stream_failures_dl"/,
  },
];

export type FixtureOutcome =
  | { readonly ok: true; readonly step: string; readonly error: string }
  | { readonly ok: false; readonly problem: string };

// Nothing listens on the discard port: a fixture that got as far as calling AWS fails with a
// connection error, which is not the error it must fail with.
const NO_EMULATOR = "http://127.0.0.1:9";

export async function fixtureOutcome(workspace: Workspace, fixture: Fixture): Promise<FixtureOutcome> {
  const dir = join(workspace.terraformDir, "fixtures", fixture.name);
  await cp(join(import.meta.dirname, "fixtures", fixture.name), dir, { recursive: true });
  await writeFile(join(dir, "emulator.tf"), emulatorOverride(NO_EMULATOR, { localBackend: false }));
  const steps: [string, string[]][] = [
    ["init", ["init", "-backend=false", "-input=false", "-no-color"]],
    ["validate", ["validate", "-no-color"]],
    ["plan", ["plan", "-refresh=false", "-input=false", "-no-color"]],
  ];
  for (const [step, args] of steps) {
    const result = await terraform(workspace, dir, args);
    if (result.code === 0) continue;
    if (!fixture.error.test(result.output))
      return {
        ok: false,
        problem: `terraform ${step} failed, but not with ${fixture.error}:\n${result.output}`,
      };
    const first =
      result.output
        .split("\n")
        .find((l) => /Error: /.test(l))
        ?.replace(/^[\s│╷╵]*/, "") ?? "";
    return { ok: true, step, error: first };
  }
  return { ok: false, problem: "Terraform accepted it: init, validate and plan all passed" };
}
