/**
 * What a benchmark page says about the machine it was measured on: figures from a shared two-core
 * machine mean little without the load it carried, so the load average is taken when a run starts.
 */
import { cpus, loadavg, totalmem } from "node:os";

export interface Machine {
  readonly node: string;
  readonly cores: number;
  readonly cpu: string;
  readonly memoryGiB: number;
  readonly platform: string;
  /** One-minute load average when the run started. */
  readonly loadAtStart: number;
  /** ISO time the run started. */
  readonly startedAt: string;
}

export function machineNow(): Machine {
  const cpu = cpus();
  return {
    node: process.versions.node,
    cores: cpu.length,
    cpu: cpu[0]?.model.trim() ?? "unknown CPU",
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    platform: `${process.platform}/${process.arch}`,
    loadAtStart: loadavg()[0] ?? 0,
    startedAt: new Date().toISOString(),
  };
}

/** One sentence for a page's header. */
export function describeMachine(m: Machine): string {
  return `${m.startedAt.slice(0, 16).replace("T", " ")} UTC, Node ${m.node}, ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, ${m.platform}, load average ${m.loadAtStart.toFixed(1)} at the start`;
}
