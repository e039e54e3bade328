/**
 * Counts DynamoDB requests at the emulator's door: a loopback proxy in front of it that sees every HTTP
 * request a client sends (an SDK retry included, which a client-side counter sees once), by operation.
 */

import { type RunningEmulator, startFaultProxy } from "@mcp-pipeline/emulators";
import type { RequestCounter } from "@mcp-pipeline/emulators/testing";

export interface EmulatorCounter {
  /** Point the clients to count at this endpoint. */
  readonly proxy: RunningEmulator;
  /** Requests by operation (`PutItem`, ...), as they reached the emulator. */
  readonly counter: RequestCounter;
}

export async function countAtEmulator(upstream: string): Promise<EmulatorCounter> {
  const counts = new Map<string, number>();
  const proxy = await startFaultProxy(upstream, (target) => {
    const operation = target.slice(target.lastIndexOf(".") + 1) || "unknown";
    counts.set(operation, (counts.get(operation) ?? 0) + 1);
    return undefined; // counted, never refused
  });
  return {
    proxy,
    counter: {
      byCommand: () => Object.fromEntries([...counts].sort(([a], [b]) => a.localeCompare(b))),
      total: () => [...counts.values()].reduce((a, b) => a + b, 0),
      reset: () => counts.clear(),
    },
  };
}
