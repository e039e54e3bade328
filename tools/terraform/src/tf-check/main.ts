/**
 * npm run tf:check: Terraform for real, against moto's server (docs/deploy.md, "The Terraform check").
 *
 *   1. terraform fmt -check -recursive;
 *   2. terraform test for every module with tests, and bootstrap's (mock provider);
 *   3. per root (environments/dev, environments/prod, bootstrap), each on its own moto on a free port:
 *      init from the provider mirror, validate and plan (side by side), apply with the artifacts of
 *      `npm run build`, the AWS SDK's view of what the emulator holds against the settings, each function's
 *      role against the calls its bundle makes and the quarantine's protection (permissions/, on
 *      `terraform show -json`), a second plan that must be empty, then destroy: applied for the roots named by --destroy (prod and bootstrap by default),
 *      planned (every applied resource, side by side with the second plan) for the others, see DESTROYED;
 *   4. the broken fixtures (tools/terraform/src/tf-check/fixtures) must fail with Terraform's own error;
 *   5. every module example (terraform/modules/<module>/examples/<example>): init and validate.
 * Before them, the Terraform's hashicorp/aws types are checked against the services of the provider build
 * (provider-services.ts), so that a type of a service the build lacks is named with the service to add.
 * Each root is a lane, 2 is one more and 4 and 5 another; the lanes run side by side (lanes.ts says why), at
 * most --jobs at a time (all of them by default; --jobs 1 runs them one after the other). The closing note
 * gives every step's time as a table per root, and where each apply and destroy waited (waits.ts).
 *
 * Usage: npm run tf:check -- [--mirror DIR | --registry] [--moto PATH] [--root dev|prod|bootstrap]... [--keep]
 *        [--destroy dev|prod|bootstrap|all]... [--jobs N] [--verbose] [--skip-module-tests]
 *        [--stand-in-provider VERSION]  (tries the check's tooling with another provider build; not a pass)
 *        [--plans-out DIR]  (`terraform show -json` of each root's second plan, for npm run iam:check)
 */
import { execFileSync } from "node:child_process";
import { access, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { type EnvironmentSettings, loadSettings } from "@mcp-pipeline/settings";
import { parseFile, TERRAFORM_ROOT } from "@mcp-pipeline/terraform";
import {
  bootstrapFindings,
  disableDeletionProtection,
  type Endpoints,
  environmentFindings,
} from "./assertions.ts";
import { type EmulatorProxy, startEmulatorProxy } from "./emulator-proxy.ts";
import { moduleExamples } from "./examples.ts";
import { FIXTURES, fixtureOutcome } from "./fixtures.ts";
import { type Lane, runLanes } from "./lanes.ts";
import { checkLockFiles, pointLockAtMirror } from "./lock-files.ts";
import { startMoto } from "./moto.ts";
import { deployedPermissionFindings, describeFindings } from "./permissions/check.ts";
import { quarantineProtectionFindings } from "./permissions/quarantine-protection.ts";
import type { TerraformShow } from "./permissions/terraform-state.ts";
import { MANIFEST, providerServices, verdictMessage } from "./provider-services.ts";
import { SERVICE_LIST } from "./service-list.ts";
import { CHECK, Steps } from "./steps.ts";
import {
  createWorkspace,
  emulatorOverride,
  type TerraformResult,
  terraformOk,
  type Workspace,
} from "./terraform.ts";
import { operationProfile, profileLine } from "./waits.ts";

const repositoryRoot = join(import.meta.dirname, "../../../..");
const ROOTS = ["dev", "prod", "bootstrap"] as const;
type Root = (typeof ROOTS)[number];
const rootDir = (terraformDir: string, root: Root) =>
  join(terraformDir, root === "bootstrap" ? "bootstrap" : join("environments", root));

/**
 * Terraform's -parallelism for apply and destroy. Its default, 10, is below what the roots have waiting at
 * once: while six queues wait for their attributes to settle (25 s each), the stream, the KMS key and both
 * buckets' lifecycle configurations (55 s) wait too, and every other resource queues behind them. The
 * waits are the provider's polls, not load on the emulator, so more of them at once cost nothing.
 */
const PARALLELISM = 32;

/**
 * The roots whose `terraform destroy` is applied unless --destroy names others. Every root's moto server
 * is thrown away after its lane, so a destroy proves only that Terraform and the provider delete what the
 * root created; the environments' destroys are the slow ones (each SQS queue's deletion waits 2 min 10 s
 * for 15 consecutive "does not exist" answers, after 25 s for its redrive policies: docs/deploy.md), and
 * the lane of the root whose destroy is applied is the check's longest. prod's is applied: dev and prod are
 * the same code, and prod's values create every resource dev's do and more (the enhanced fan-out
 * consumer), so its destroy proves the delete calls of every resource type of the pipeline; dev's is
 * planned (every resource the apply created must be planned for deletion), which keeps one environment's
 * lane free of the 165 s of deletion waits.
 */
const DESTROYED: readonly Root[] = ["prod", "bootstrap"];

/** The lanes of the work that needs no emulator: the module tests; the broken fixtures and the examples. */
const MODULE_TESTS = "module tests";
const EXAMPLES = "fixtures and examples";

/** The bootstrap root's inputs under check (its variables' defaults give the environments). */
const BOOTSTRAP = {
  region: "eu-west-1",
  repository: "example-org/mcp-event-pipelines",
  environments: ["dev", "prod"],
};

class CheckFailed extends Error {
  override readonly name = "CheckFailed";
}

const { values } = parseArgs({
  options: {
    mirror: { type: "string" },
    registry: { type: "boolean", default: false },
    moto: { type: "string" },
    root: { type: "string", multiple: true },
    keep: { type: "boolean", default: false },
    "stand-in-provider": { type: "string" },
    verbose: { type: "boolean", default: false },
    "skip-module-tests": { type: "boolean", default: false },
    jobs: { type: "string" },
    destroy: { type: "string", multiple: true },
    "plans-out": { type: "string" },
  },
});

/** The number in the first line of `output` that matches `pattern` (its first group), or null. */
function countIn(output: string, pattern: RegExp): number | null {
  for (const line of output.split("\n")) {
    const match = pattern.exec(line.trim());
    if (match !== null) return Number(match[1]);
  }
  return null;
}

/** The CI tools cache, where .ci/aws-provider.sh builds the mirror: `${CI_TOOLS_DIR:-~/.cache/…}` as there. */
const toolsDir = process.env.CI_TOOLS_DIR || join(homedir(), ".cache", "mcp-event-pipelines-ci");

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** The roots' provider constraint (environments/common/versions.tf; every module and root has the same). */
async function awsConstraint(): Promise<string> {
  const versions = await parseFile(join(TERRAFORM_ROOT, "environments", "common", "versions.tf"));
  const terraform = (versions.terraform as { required_providers: { aws: { version: string } }[] }[])[0];
  const version = terraform?.required_providers[0]?.aws.version;
  if (version === undefined)
    throw new CheckFailed("environments/common/versions.tf: no hashicorp/aws version");
  return version;
}

/** The hashicorp/aws version the mirror holds (the one its init will take). */
async function mirrorVersion(mirror: string): Promise<string> {
  const versions = await readdir(join(mirror, "registry.terraform.io", "hashicorp", "aws"));
  if (versions.length !== 1)
    throw new CheckFailed(
      `${mirror}: expected one hashicorp/aws version, found ${versions.join(", ") || "none"}`,
    );
  return versions[0] as string;
}

/** The provider mirror: --mirror, else the cache .ci/aws-provider.sh fills; --registry for none. */
async function mirrorDir(): Promise<string | null> {
  if (values.registry) return null;
  const dir = values.mirror ?? join(toolsDir, "terraform-mirror");
  const providers = join(dir, "registry.terraform.io", "hashicorp", "aws");
  const files = (await exists(providers)) ? await readdir(providers, { recursive: true }) : [];
  // A build in progress leaves terraform-provider-aws_v<version>.partial: not a provider yet.
  if (!files.some((f) => /terraform-provider-aws_v[^/]*$/.test(f) && !f.endsWith(".partial")))
    throw new CheckFailed(
      `no hashicorp/aws provider in ${dir}: run .ci/aws-provider.sh (7-18 minutes once), or pass --registry where registry.terraform.io is reachable`,
    );
  return dir;
}

function motoServer(): string {
  if (values.moto !== undefined) return values.moto;
  const out = execFileSync("bash", [join(repositoryRoot, ".ci", "moto.sh")], { encoding: "utf8" });
  return out.trim().split("\n").pop() ?? "";
}

async function outputs(workspace: Workspace, dir: string): Promise<Record<string, unknown>> {
  const { output } = await terraformOk(workspace, dir, ["output", "-json"]);
  const parsed = JSON.parse(output) as Record<string, { value: unknown }>;
  return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, v.value]));
}

const summaryLine = (output: string, pattern: RegExp) =>
  output
    .split("\n")
    .find((l) => pattern.test(l))
    ?.trim() ?? "";

async function checkRoot(
  steps: Steps,
  workspace: Workspace,
  root: Root,
  moto: string,
  options: { readonly destroy: boolean; readonly waits: string[]; readonly plansOut?: string | undefined },
): Promise<string[]> {
  const settings = root === "bootstrap" ? null : await loadSettings(repositoryRoot, root);
  const server = await steps.run(root, "start moto", () => startMoto(moto));
  let proxy: EmulatorProxy | undefined;
  try {
    proxy = await startEmulatorProxy(server.endpoint);
    const check = new RootCheck(steps, workspace, root, settings, options, {
      emulator: server.endpoint,
      proxy: proxy.endpoint,
    });
    await check.run();
    const gaps = [...new Set(proxy.events.map((e) => e.kind))];
    check.notes.push(
      `${root}: emulator gaps bridged by the proxy: ${gaps.length > 0 ? gaps.join(", ") : "none"}`,
    );
    return check.notes;
  } finally {
    await proxy?.close();
    await server.stop();
  }
}

/**
 * One root's check against its moto (and the proxy in front of it), in the order the file's header gives:
 * each step a method, each failure a CheckFailed naming the root. `notes` gathers the closing note's lines.
 */
class RootCheck {
  readonly notes: string[] = [];
  private readonly dir: string;
  private readonly steps: Steps;
  private readonly workspace: Workspace;
  private readonly root: Root;
  private readonly settings: EnvironmentSettings | null;
  private readonly options: {
    readonly destroy: boolean;
    readonly waits: string[];
    readonly plansOut?: string | undefined;
  };
  private readonly endpoints: Endpoints;

  constructor(
    steps: Steps,
    workspace: Workspace,
    root: Root,
    settings: EnvironmentSettings | null,
    options: { readonly destroy: boolean; readonly waits: string[]; readonly plansOut?: string | undefined },
    endpoints: Endpoints,
  ) {
    this.steps = steps;
    this.workspace = workspace;
    this.root = root;
    this.settings = settings;
    this.options = options;
    this.endpoints = endpoints;
    this.dir = rootDir(workspace.terraformDir, root);
  }

  async run(): Promise<void> {
    await this.pointAtEmulator();
    await this.initValidateAndPlan();
    const applied = await this.apply();
    await this.checkWhatTheEmulatorHolds();
    await this.checkTheAppliedState();
    if (this.options.destroy) await this.destroyApplied(applied);
    else await this.destroyPlanned(applied);
  }

  private terraform(args: readonly string[], ok?: readonly number[]): Promise<TerraformResult> {
    return terraformOk(this.workspace, this.dir, args, ok);
  }

  /** The provider override to the proxy; bootstrap's two required inputs (the environments take their tfvars as committed). */
  private async pointAtEmulator(): Promise<void> {
    await writeFile(
      join(this.dir, "emulator_override.tf"),
      emulatorOverride(this.endpoints.proxy, { localBackend: this.root !== "bootstrap" }),
    );
    if (this.root === "bootstrap") {
      const vars = { region: BOOTSTRAP.region, github_repository: BOOTSTRAP.repository };
      await writeFile(join(this.dir, "emulator.auto.tfvars.json"), `${JSON.stringify(vars, null, 2)}\n`);
    }
  }

  private async initValidateAndPlan(): Promise<void> {
    const { root } = this;
    // -lockfile=readonly as in the workflows: a provider the root requires that its lock lacks fails.
    await this.steps.run(root, "init", () =>
      this.terraform(["init", "-input=false", "-no-color", "-lockfile=readonly"]),
    );
    // validate and plan side by side: both only read the root (validate takes no state lock), and plan
    // validates the same configuration again, so validate need not hold plan back. Both end before either
    // failure is reported, validate's first: no terraform outlives its moto.
    const [validated, planned] = await Promise.allSettled([
      this.steps.run(root, "validate (beside plan)", () => this.terraform(["validate", "-no-color"])),
      this.steps.run(root, "plan", () =>
        this.terraform(["plan", "-input=false", "-no-color", "-out=check.tfplan"]),
      ),
    ]);
    if (validated.status === "rejected") throw validated.reason;
    if (planned.status === "rejected") throw planned.reason;
    this.notes.push(`${root}: ${summaryLine(planned.value.output, /^Plan: /)}`);
  }

  /** The plan applied: how many resources it created, which the destroy (or its plan) must delete. */
  private async apply(): Promise<number> {
    const { root } = this;
    const apply = await this.steps.run(root, "apply", () =>
      this.terraform(["apply", "-input=false", "-no-color", `-parallelism=${PARALLELISM}`, "check.tfplan"]),
    );
    this.notes.push(`${root}: ${summaryLine(apply.output, /^Apply complete!/)}`);
    const applied = countIn(apply.output, /^Apply complete! Resources: (\d+) added/);
    if (applied === null)
      throw new CheckFailed(`${root}: apply printed no "Apply complete!":\n${apply.output}`);
    this.options.waits.push(profileLine(`${root} apply`, operationProfile(apply.lines)));
    return applied;
  }

  /** What the emulator holds, read with the AWS SDK, against the settings (assertions.ts). */
  private async checkWhatTheEmulatorHolds(): Promise<void> {
    const { root, settings } = this;
    const out = await outputs(this.workspace, this.dir);
    const findings = await this.steps.run(root, "what the emulator holds (AWS SDK)", async () => {
      if (settings === null) return bootstrapFindings(this.endpoints, out, BOOTSTRAP);
      return environmentFindings(settings, this.endpoints, {
        alarmTopicArn: String(out.alarm_topic_arn),
        streamName: String(out.stream_name),
      });
    });
    if (findings.length > 0)
      throw new CheckFailed(
        `${root}: the emulator does not hold what the settings say:\n  ${findings.join("\n  ")}`,
      );
  }

  /**
   * The policies as rendered and applied, against the calls the build's bundles make, and what protects
   * the quarantine (tools/terraform/src/tf-check/check-deployed.ts runs the same on a saved state).
   */
  private async checkTheAppliedState(): Promise<void> {
    const { root, settings } = this;
    if (settings === null) return;
    const deployed = await this.steps.run(
      root,
      "permissions and quarantine (the applied state)",
      async () => {
        const { output } = await terraformOk({ ...this.workspace, verbose: false }, this.dir, [
          "show",
          "-json",
          "-no-color",
        ]);
        const show = JSON.parse(output) as TerraformShow;
        return [
          ...describeFindings(
            await deployedPermissionFindings(show, {
              root: repositoryRoot,
              distDir: join(repositoryRoot, "dist"),
              namePrefix: settings.name_prefix,
            }),
          ),
          ...quarantineProtectionFindings(show, settings),
        ];
      },
    );
    if (deployed.length > 0)
      throw new CheckFailed(
        `${root}: the applied state breaks ${deployed.length} rule(s):\n  ${deployed.join("\n  ")}`,
      );
    this.notes.push(
      `${root}: every function's calls allowed by its role, nothing more; the quarantine protected`,
    );
  }

  private secondPlan(): Promise<TerraformResult> {
    return this.steps.run(this.root, "second plan (must be empty)", () =>
      this.terraform(
        ["plan", "-input=false", "-no-color", "-detailed-exitcode", "-out=second.tfplan"],
        [0, 2],
      ),
    );
  }

  private async emptySecondPlan(second: TerraformResult): Promise<void> {
    if (second.code !== 0)
      throw new CheckFailed(
        `${this.root}: the second plan is not empty (a perpetual diff):\n${second.output}`,
      );
    // After the apply every ARN and policy document is known: what npm run iam:check judges.
    if (this.options.plansOut !== undefined) {
      const shown = await this.terraform(["show", "-json", "second.tfplan"]);
      await writeFile(join(this.options.plansOut, `${this.root}.json`), shown.output);
    }
  }

  /** The second plan, then `terraform destroy` applied: it must delete what the apply created. */
  private async destroyApplied(applied: number): Promise<void> {
    const { root, settings } = this;
    await this.emptySecondPlan(await this.secondPlan());
    const destroyed = await this.steps.run(root, "destroy", async () => {
      // The tables refuse DeleteTable while deletion protection is on (as in AWS): what an operator
      // deliberately switches off before destroying an environment.
      if (settings !== null) await disableDeletionProtection(this.endpoints.emulator, settings.region);
      // -refresh=false: the second plan has just read every resource back; a second refresh of the same
      // state would only repeat it.
      return this.terraform([
        "destroy",
        "-auto-approve",
        "-refresh=false",
        "-input=false",
        "-no-color",
        `-parallelism=${PARALLELISM}`,
      ]);
    });
    const count = countIn(destroyed.output, /^Destroy complete! Resources: (\d+) destroyed/);
    if (count !== applied)
      throw new CheckFailed(`${root}: destroy deleted ${count} resources, the apply created ${applied}`);
    this.notes.push(`${root}: destroy applied, ${count} resources deleted`);
    this.options.waits.push(profileLine(`${root} destroy`, operationProfile(destroyed.lines)));
  }

  /**
   * The destroy plan beside the second plan: both only read the state (the second plan holds its lock, so
   * the destroy plan takes none) and -refresh=false plans from the state the second plan reads back.
   */
  private async destroyPlanned(applied: number): Promise<void> {
    const { root } = this;
    const [second, planned] = await Promise.allSettled([
      this.secondPlan(),
      this.steps.run(root, "destroy plan (every resource)", () =>
        this.terraform(
          ["plan", "-destroy", "-refresh=false", "-lock=false", "-input=false", "-no-color"],
          [0],
        ),
      ),
    ]);
    if (second.status === "rejected") throw second.reason;
    if (planned.status === "rejected") throw planned.reason;
    await this.emptySecondPlan(second.value);
    const count = countIn(planned.value.output, /^Plan: 0 to add, 0 to change, (\d+) to destroy\./);
    if (count !== applied)
      throw new CheckFailed(
        `${root}: the destroy plan deletes ${count ?? "no"} resources, the apply created ${applied}:\n${planned.value.output}`,
      );
    this.notes.push(`${root}: destroy planned (not applied: see --destroy), ${count} resources to delete`);
  }
}

/**
 * The whole check, in the order of the file's header: the flags refused before anything runs, the
 * provider's services and moto found, then in a temporary workspace fmt, the lock files and the lanes;
 * the closing note is printed whatever happened once the temporary directory exists.
 */
async function main(): Promise<void> {
  const steps = new Steps();
  const roots = await rootsUnderCheck();
  const destroyed = destroyedRoots();
  const jobs = laneJobs(roots);
  const mirror = await mirrorDir();
  const notes: string[] = [];
  const standIn = values["stand-in-provider"];
  if (mirror !== null && standIn === undefined) notes.push(...(await providerServicesNote(steps, mirror)));
  const moto = await steps.run(CHECK, "moto (.ci/moto.sh)", async () => motoServer());
  const plansOut = values["plans-out"];
  if (plansOut !== undefined) await mkdir(plansOut, { recursive: true });
  const tmp = await mkdtemp(join(tmpdir(), "tf-check-"));
  const waits: string[] = [];
  if (standIn !== undefined)
    notes.push(
      `STAND-IN: hashicorp/aws pinned to ${standIn} in the workspace; this run is not a pass of the check`,
    );
  try {
    await formatCheck(steps);
    const workspace = {
      ...(await createWorkspace(repositoryRoot, tmp, mirror, values["stand-in-provider"])),
      verbose: values.verbose,
    };
    notes.push(await lockFilesNote(steps, workspace, mirror, standIn));
    const modulesDir = join(workspace.terraformDir, "modules");
    const modules = await modulesWithTests(workspace.terraformDir, modulesDir);
    const examples = await moduleExamples(modulesDir);

    // One lane per root (first: they take longest, which matters with --jobs below the number of lanes),
    // then two for the work that needs no emulator (CPU-bound: two lanes finish it side by side with the
    // roots, whose time is mostly the provider waiting; one lane of it took longer than any root).
    const lanes: Lane<string[]>[] = [
      ...roots.map((root) => ({
        name: root,
        run: () =>
          checkRoot(steps, { ...workspace, label: root }, root, moto, {
            destroy: destroyed.includes(root),
            waits,
            plansOut,
          }),
      })),
      moduleTestsLane(steps, workspace, modules),
      fixturesAndExamplesLane(steps, workspace, modulesDir, examples),
    ];
    await runLanesNoting(lanes, jobs, notes);
  } finally {
    if (values.keep) process.stdout.write(`kept ${tmp}\n`);
    else await rm(tmp, { recursive: true, force: true });
    const waited = waits.length > 0 ? `\nwhere apply and destroy wait:\n  ${waits.join("\n  ")}\n` : "";
    process.stdout.write(`\n${notes.join("\n")}\n${waited}\n${steps.summary(roots)}\n`);
  }
}

/** --root's roots (all by default); the environments deploy `npm run build`'s zips, so it must have run. */
async function rootsUnderCheck(): Promise<Root[]> {
  const roots = (values.root ?? ROOTS) as Root[];
  for (const r of roots)
    if (!ROOTS.includes(r)) throw new CheckFailed(`--root ${r}: one of ${ROOTS.join(", ")}`);
  if (roots.some((r) => r !== "bootstrap") && !(await exists(join(repositoryRoot, "dist", "manifest.json"))))
    throw new CheckFailed(
      "dist/manifest.json is missing: run `npm run build` first (the roots deploy its zips)",
    );
  return roots;
}

/** The roots whose destroy is applied: --destroy's (all for every root), else DESTROYED. */
function destroyedRoots(): readonly Root[] {
  const destroyed: readonly Root[] =
    values.destroy === undefined
      ? DESTROYED
      : values.destroy.includes("all")
        ? ROOTS
        : (values.destroy as Root[]);
  for (const r of destroyed)
    if (!ROOTS.includes(r)) throw new CheckFailed(`--destroy ${r}: one of ${ROOTS.join(", ")} or all`);
  return destroyed;
}

/** Lanes at a time: --jobs, else every lane (one per root and the two that need no emulator). */
function laneJobs(roots: readonly Root[]): number {
  const jobs = values.jobs === undefined ? roots.length + 2 : Number(values.jobs);
  if (!Number.isInteger(jobs) || jobs < 1) throw new CheckFailed(`--jobs ${values.jobs}: a positive integer`);
  return jobs;
}

/**
 * The Terraform's hashicorp/aws types against the services of the mirror's build (a failure names the
 * service to add); a mirror .ci/aws-provider.sh did not build has no manifest, which the note says.
 */
async function providerServicesNote(steps: Steps, mirror: string): Promise<string[]> {
  const verdict = await steps.run(CHECK, `provider services (${SERVICE_LIST})`, () =>
    providerServices(repositoryRoot, mirror),
  );
  if (verdict === null)
    return [`no ${MANIFEST} in ${mirror} (not a build of .ci/aws-provider.sh): its services not checked`];
  if (verdict.kind === "ok") return [verdictMessage(verdict)];
  throw new CheckFailed(verdictMessage(verdict));
}

/** Step 1: terraform fmt -check over the whole of terraform/, in the repository (not the workspace). */
async function formatCheck(steps: Steps): Promise<void> {
  await steps.run(CHECK, "terraform fmt -check -recursive", () =>
    terraformOk({ terraformDir: "", env: process.env }, join(repositoryRoot, "terraform"), [
      "fmt",
      "-check",
      "-recursive",
      "-diff",
      "-no-color",
    ]),
  );
}

/**
 * The roots' lock files against the provider constraint; with a mirror, each workspace copy's lock is
 * pointed at the mirror's build (or the stand-in), which inits with -lockfile=readonly.
 */
async function lockFilesNote(
  steps: Steps,
  workspace: Workspace,
  mirror: string | null,
  standIn: string | undefined,
): Promise<string> {
  const constraint = await awsConstraint();
  const locks = await steps.run(CHECK, "lock files", () =>
    checkLockFiles(
      Object.fromEntries(ROOTS.map((r) => [r, rootDir(join(repositoryRoot, "terraform"), r)])),
      constraint,
    ),
  );
  const hashes = Object.entries(locks.hashes)
    .map(([r, n]) => `${r} ${n}`)
    .join(", ");
  if (mirror === null)
    return `lock files: hashicorp/aws ${locks.version} in every root (checksums: ${hashes})`;
  const built = standIn ?? (await mirrorVersion(mirror));
  for (const r of ROOTS) await pointLockAtMirror(rootDir(workspace.terraformDir, r), built, constraint);
  return `lock files: hashicorp/aws ${locks.version} in every root (checksums: ${hashes}); the mirror's local build ${built} stands in for it in the workspace copy, inited with -lockfile=readonly`;
}

/** Step 2's directories: every module with tests, and bootstrap's own (its variables' validations, on a mock provider). */
async function modulesWithTests(terraformDir: string, modulesDir: string): Promise<string[]> {
  const modules: string[] = [];
  for (const module of (await readdir(modulesDir)).sort())
    if (!values["skip-module-tests"] && (await exists(join(modulesDir, module, "tests"))))
      modules.push(`modules/${module}`);
  if (!values["skip-module-tests"] && (await exists(join(terraformDir, "bootstrap", "tests"))))
    modules.push("bootstrap");
  return modules;
}

/** Step 2's lane: init and `terraform test` each module, one after the other; a note per module. */
function moduleTestsLane(steps: Steps, workspace: Workspace, modules: readonly string[]): Lane<string[]> {
  return {
    name: MODULE_TESTS,
    run: async () => {
      const laneNotes: string[] = [];
      const lane = { ...workspace, label: MODULE_TESTS };
      for (const module of modules) {
        const dir = join(workspace.terraformDir, module);
        await steps.run(MODULE_TESTS, module, async () => {
          await terraformOk(lane, dir, ["init", "-backend=false", "-input=false", "-no-color"]);
          const result = await terraformOk(lane, dir, ["test", "-no-color"]);
          laneNotes.push(`${module}: ${summaryLine(result.output, /^Success!|passed/)}`);
        });
      }
      return laneNotes;
    },
  };
}

/** Steps 4 and 5's lane: each broken fixture must fail with Terraform's error, then each example validates. */
function fixturesAndExamplesLane(
  steps: Steps,
  workspace: Workspace,
  modulesDir: string,
  examples: readonly string[],
): Lane<string[]> {
  return {
    name: EXAMPLES,
    run: async () => {
      const laneNotes: string[] = [];
      const lane = { ...workspace, label: EXAMPLES };
      for (const fixture of FIXTURES) {
        const outcome = await steps.run(EXAMPLES, `fixture ${fixture.name} must fail`, () =>
          fixtureOutcome(lane, fixture),
        );
        if (!outcome.ok) throw new CheckFailed(`fixture ${fixture.name}: ${outcome.problem}`);
        laneNotes.push(`fixture ${fixture.name}: refused by terraform ${outcome.step}: ${outcome.error}`);
      }
      for (const example of examples) {
        const dir = join(modulesDir, example);
        await steps.run(EXAMPLES, `validate ${example}`, async () => {
          await terraformOk(lane, dir, ["init", "-backend=false", "-input=false", "-no-color"]);
          const result = await terraformOk(lane, dir, ["validate", "-no-color"]);
          laneNotes.push(`modules/${example}: ${summaryLine(result.output, /^Success!/)}`);
        });
      }
      return laneNotes;
    },
  };
}

/**
 * Runs the lanes side by side (at most `jobs` at a time) to the end of each, so that every lane's failure
 * is told, not only the first: the notes of the lanes that passed go to `notes` in lane order (the closing
 * note keeps them even when another lane failed), then one CheckFailed names each lane that failed.
 */
async function runLanesNoting(
  lanes: readonly Lane<string[]>[],
  jobs: number,
  notes: string[],
): Promise<void> {
  const outcomes = await runLanes(lanes, jobs);
  for (const outcome of outcomes) if (outcome.ok) notes.push(...outcome.value);
  const failed = outcomes.flatMap((o) =>
    o.ok ? [] : [`${o.name}: ${o.error instanceof Error ? o.error.message : String(o.error)}`],
  );
  if (failed.length > 0) throw new CheckFailed(failed.join("\n\n"));
}

main().catch((error: unknown) => {
  process.stderr.write(`\ntf:check failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
});
