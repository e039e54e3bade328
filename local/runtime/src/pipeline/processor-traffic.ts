/**
 * What the processor costs in DynamoDB requests, on the live pipeline: every request its DynamoDB client
 * sends is counted at the loopback proxy in front of the emulator (the processor's only DynamoDB endpoint),
 * and every stream record the Kinesis ESM hands it is counted as a first delivery or a redelivery (the
 * same record, by its eventID `shardId:sequenceNumber`, again: a retried or bisected batch, §1.4).
 */

/** The processor's DynamoDB requests and the stream records it received, over a run. */
export interface ProcessorTrafficCounts {
  /** Requests that reached DynamoDB, by operation (e.g. `PutItem`). */
  readonly byOperation: Readonly<Record<string, number>>;
  /** Requests that reached DynamoDB, all operations. */
  readonly requests: number;
  /** Requests the local fault injection answered instead of DynamoDB (`--stuck-rate`): not sent on. */
  readonly refusedByFault: number;
  /** Stream records delivered to the processor for the first time (producer duplicates and replays are records of their own). */
  readonly firstDeliveries: number;
  /** Deliveries of a record the processor had already received. */
  readonly redeliveries: number;
  /** `requests / firstDeliveries`: every request of the run, redeliveries' included, per new record (0 without any). */
  readonly requestsPerNewRecord: number;
}

export class ProcessorTraffic {
  readonly #byOperation = new Map<string, number>();
  readonly #delivered = new Set<string>();
  #refused = 0;
  #redeliveries = 0;

  /** One request of the processor's DynamoDB client; `target` is its X-Amz-Target header. */
  request(target: string, refused: boolean): void {
    if (refused) {
      this.#refused += 1;
      return;
    }
    const operation = target.slice(target.lastIndexOf(".") + 1) || "unknown";
    this.#byOperation.set(operation, (this.#byOperation.get(operation) ?? 0) + 1);
  }

  /** One invocation's event, as the Kinesis ESM sends it (`{ Records: [{ eventID }] }`). */
  delivered(event: unknown): void {
    const records = (event as { Records?: readonly { eventID?: unknown }[] } | undefined)?.Records ?? [];
    for (const record of records) {
      const id = String(record.eventID);
      if (this.#delivered.has(id)) this.#redeliveries += 1;
      else this.#delivered.add(id);
    }
  }

  counts(): ProcessorTrafficCounts {
    const byOperation = Object.fromEntries([...this.#byOperation].sort(([a], [b]) => a.localeCompare(b)));
    const requests = [...this.#byOperation.values()].reduce((a, b) => a + b, 0);
    const firstDeliveries = this.#delivered.size;
    return {
      byOperation,
      requests,
      refusedByFault: this.#refused,
      firstDeliveries,
      redeliveries: this.#redeliveries,
      requestsPerNewRecord: firstDeliveries === 0 ? 0 : requests / firstDeliveries,
    };
  }
}
