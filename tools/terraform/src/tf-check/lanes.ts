/**
 * The check's lanes (one per Terraform root, one for the module tests, one for the broken fixtures and the
 * examples) run side by side, at most `jobs` at a time: much of a root's time is the provider waiting
 * between polls (an SQS queue's creation alone is six reads 5 s apart), not work, so the roots' waits
 * overlap each other and the other lanes' CPU-bound work. Every lane
 * runs to its end even when another fails (each stops its own moto server); the outcomes come back in the
 * lanes' order.
 */
export type LaneOutcome<T> =
  | { readonly name: string; readonly ok: true; readonly value: T }
  | { readonly name: string; readonly ok: false; readonly error: unknown };

export interface Lane<T> {
  readonly name: string;
  readonly run: () => Promise<T>;
}

export async function runLanes<T>(lanes: readonly Lane<T>[], jobs: number): Promise<LaneOutcome<T>[]> {
  if (!Number.isInteger(jobs) || jobs < 1)
    throw new RangeError(`jobs must be a positive integer, not ${jobs}`);
  const outcomes: LaneOutcome<T>[] = new Array(lanes.length);
  let next = 0;
  const worker = async () => {
    while (next < lanes.length) {
      const index = next++;
      const lane = lanes[index] as Lane<T>;
      try {
        outcomes[index] = { name: lane.name, ok: true, value: await lane.run() };
      } catch (error) {
        outcomes[index] = { name: lane.name, ok: false, error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, lanes.length) }, worker));
  return outcomes;
}
