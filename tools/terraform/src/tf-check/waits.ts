/**
 * Where an apply or a destroy spends its time, read from Terraform's own output: how long Terraform took
 * before its first resource operation (starting, loading the provider's schema, reading the plan), and
 * each resource's "Creation/Modifications/Destruction complete after 2m10s". Nearly all of a root's
 * time after the start is the hashicorp/aws provider's waiters polling until an answer has held long
 * enough (docs/deploy.md, "Where the time goes"), so the check names the slowest resource types.
 */
import type { TimedLine } from "./terraform.ts";

export type Operation = "create" | "modify" | "destroy";

export interface ResourceTime {
  readonly address: string;
  /** The resource type (aws_sqs_queue), from the address without module path and instance keys. */
  readonly type: string;
  readonly operation: Operation;
  readonly seconds: number;
}

/** Resources of one type and operation: how many, and the longest one's time. */
export interface TypeTime {
  readonly type: string;
  readonly operation: Operation;
  readonly count: number;
  readonly seconds: number;
}

export interface OperationProfile {
  /** From the command's start to its first "Creating...", "Modifying..." or "Destroying...". */
  readonly beforeFirstResource: number | null;
  readonly slowest: readonly TypeTime[];
}

const OPERATION = {
  Creation: "create",
  Modifications: "modify",
  Destruction: "destroy",
} as const satisfies Record<string, Operation>;

const COMPLETE = /^(.+?): (Creation|Modifications|Destruction) complete after ((?:\d+h)?(?:\d+m)?\d+s)/;
const STARTED = /^.+?: (Creating|Modifying|Destroying)\.\.\./;

/** Terraform's "1h2m3s", "2m10s", "0s" in seconds. */
export function durationSeconds(text: string): number {
  const match = /^(?:(\d+)h)?(?:(\d+)m)?(\d+)s$/.exec(text);
  if (match === null) throw new RangeError(`not a Terraform duration: ${JSON.stringify(text)}`);
  const [, h = "0", m = "0", s = "0"] = match;
  return Number(h) * 3600 + Number(m) * 60 + Number(s);
}

/** "module.pipeline.module.queue[\"tool_jobs\"].aws_sqs_queue.dlq" -> "aws_sqs_queue". */
export function resourceType(address: string): string {
  const parts = address.replace(/\[[^\]]*\]/g, "").split(".");
  return parts.length >= 2 ? (parts[parts.length - 2] ?? address) : address;
}

export function resourceTimes(output: string): ResourceTime[] {
  const times: ResourceTime[] = [];
  for (const line of output.split("\n")) {
    const match = COMPLETE.exec(line.trim());
    if (match === null) continue;
    const [, address = "", word = "", duration = ""] = match;
    times.push({
      address,
      type: resourceType(address),
      operation: OPERATION[word as keyof typeof OPERATION],
      seconds: durationSeconds(duration),
    });
  }
  return times;
}

/** Grouped by type and operation, slowest first; types whose longest time is under `atLeast` left out. */
export function slowestTypes(times: readonly ResourceTime[], atLeast = 2): TypeTime[] {
  const groups = new Map<string, TypeTime>();
  for (const t of times) {
    const key = `${t.operation} ${t.type}`;
    const group = groups.get(key);
    groups.set(key, {
      type: t.type,
      operation: t.operation,
      count: (group?.count ?? 0) + 1,
      seconds: Math.max(group?.seconds ?? 0, t.seconds),
    });
  }
  return [...groups.values()]
    .filter((g) => g.seconds >= atLeast)
    .sort((a, b) => b.seconds - a.seconds || a.type.localeCompare(b.type));
}

export function operationProfile(lines: readonly TimedLine[]): OperationProfile {
  const first = lines.find((l) => STARTED.test(l.text.trim()));
  return {
    beforeFirstResource: first?.seconds ?? null,
    slowest: slowestTypes(resourceTimes(lines.map((l) => l.text).join("\n"))),
  };
}

/** One line of the closing note: "dev apply: 20.1 s before the first resource; aws_sqs_queue x6 27 s, ...". */
export function profileLine(name: string, profile: OperationProfile): string {
  const before =
    profile.beforeFirstResource === null
      ? "no resource operation"
      : `${profile.beforeFirstResource.toFixed(1)} s before the first resource`;
  const types = profile.slowest.map((t) => `${t.type} x${t.count} ${t.seconds} s`).join(", ");
  return `${name}: ${before}${types === "" ? "" : `; the slowest (the longest of each type): ${types}`}`;
}
