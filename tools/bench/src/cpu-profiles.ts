/**
 * Where a local run's CPU went, by thread kind: a directory of `.cpuprofile` files written by
 * `node --cpu-prof --cpu-prof-dir=DIR` (every worker thread inherits the flag: emulators and sandboxes,
 * local/emulators/src/thread-exec-argv.ts) summed per kind of thread (the host's main thread, each
 * function's sandboxes, each emulator), then by package and by function within each kind.
 *
 *   node --import tsx --cpu-prof --cpu-prof-dir=/tmp/prof local/chaos/bin/chaos.ts --events 3000
 *   npx tsx tools/bench/src/cpu-profiles.ts /tmp/prof [top]
 *
 * A sample is "busy" unless V8 marked it idle; on a loaded machine a thread that waits for a core keeps
 * being sampled where it stopped, so compare shares within one run, not seconds across runs.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runIfMain } from "@mcp-pipeline/cli";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}
interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

/** The package (or Node's module, or our source file) a frame's URL belongs to. */
export function ownerOf(url: string): string {
  if (!url) return "(native, GC, V8)";
  const pkg = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (pkg) return pkg[1] as string;
  if (url.startsWith("node:")) return url;
  const ours = url.match(/\/((?:packages|functions|scripts)\/.*)$/);
  if (ours) return ours[1] as string;
  const bundle = url.match(/\/(processor|tool-worker|fifo-worker|dlq-redrive)-[^/]+\/([^/]+)$/);
  if (bundle) return `${bundle[1]} bundle ${bundle[2]}`;
  return url;
}

/** The kind of thread a profile is of, from the code it ran. */
export function threadKind(urls: readonly string[]): string {
  const all = urls.join(" ");
  const sandbox = all.match(/mcp-local-[^/]+\/(processor|tool-worker|fifo-worker|dlq-redrive)-/);
  if (sandbox) return `${sandbox[1]} sandboxes`;
  if (/emulator-host\.mjs/.test(all)) {
    if (/node_modules\/dynalite/.test(all)) return "dynalite";
    if (/node_modules\/kinesalite/.test(all)) return "kinesalite";
    if (/node_modules\/fauxqs/.test(all)) return "fauxqs";
  }
  if (/sqs-host\.mjs/.test(all)) return "fauxqs (restartable, chaos)";
  return "main (pollers, proxies, doors, witness, ledger)";
}

interface Tally {
  threads: number;
  busyMs: number;
  readonly byOwner: Map<string, number>;
  readonly byFunction: Map<string, number>;
}

export function summarise(dir: string): Map<string, Tally> {
  const kinds = new Map<string, Tally>();
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"))) {
    const profile = JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile;
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const msPerSample = (profile.endTime - profile.startTime) / 1000 / Math.max(1, profile.samples.length);
    const kind = threadKind(profile.nodes.map((n) => n.callFrame.url));
    const tally = kinds.get(kind) ?? { threads: 0, busyMs: 0, byOwner: new Map(), byFunction: new Map() };
    tally.threads += 1;
    for (const id of profile.samples) {
      const node = byId.get(id);
      if (!node || node.callFrame.functionName === "(idle)") continue;
      tally.busyMs += msPerSample;
      const owner = ownerOf(node.callFrame.url);
      tally.byOwner.set(owner, (tally.byOwner.get(owner) ?? 0) + msPerSample);
      const fn = `${node.callFrame.functionName || "(anonymous)"} ${owner}`;
      tally.byFunction.set(fn, (tally.byFunction.get(fn) ?? 0) + msPerSample);
    }
    kinds.set(kind, tally);
  }
  return kinds;
}

function main(argv: readonly string[]): Promise<number> {
  const [dir, topText] = argv;
  if (!dir) {
    process.stderr.write("usage: tsx tools/bench/src/cpu-profiles.ts <dir of .cpuprofile files> [top]\n");
    return Promise.resolve(2);
  }
  const top = Number(topText ?? 10);
  const kinds = summarise(dir);
  const total = [...kinds.values()].reduce((a, k) => a + k.busyMs, 0);
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  const lines = [`busy samples of all threads: ${s(total)}`];
  for (const [kind, k] of [...kinds].sort((a, b) => b[1].busyMs - a[1].busyMs)) {
    lines.push(
      "",
      `${kind}: ${k.threads} thread(s), ${s(k.busyMs)} (${((100 * k.busyMs) / total).toFixed(1)}%)`,
    );
    for (const [owner, ms] of [...k.byOwner].sort((a, b) => b[1] - a[1]).slice(0, top))
      lines.push(`  ${s(ms).padStart(8)}  ${owner}`);
    lines.push("  functions:");
    for (const [fn, ms] of [...k.byFunction].sort((a, b) => b[1] - a[1]).slice(0, top))
      lines.push(`  ${s(ms).padStart(8)}  ${fn}`);
  }
  process.stdout.write(`${lines.join("\n")}\n`);
  return Promise.resolve(0);
}

runIfMain(import.meta.url, main, 1);
