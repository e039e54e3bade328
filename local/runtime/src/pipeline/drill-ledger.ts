/**
 * What a drill put into the stack and where each input must end, written to a file of the stack's
 * temporary folder (DRILL_LEDGER in the served file): the witness `npm run drill:check` judges the
 * emulators' state by. The functions and the recovery CLI never see it.
 */
import { readFile, writeFile } from "node:fs/promises";

export const DRILL_LEDGER_FORMAT = 1;

/** Where an input must end for the drill to be done. */
export const DrillExpectation = {
  /** A valid event: its call is in the tool-calls table (replayed after the fault). */
  Applied: "applied",
  /** A valid job: its call has a final status (redriven after the outage). */
  Completed: "completed",
  /** Permanent poison: kept where it belongs (the quarantine, a DLQ) for a person, never deleted. */
  Kept: "kept",
} as const;
export type DrillExpectation = (typeof DrillExpectation)[keyof typeof DrillExpectation];

export type DrillInput =
  | {
      readonly kind: "event";
      readonly expect: typeof DrillExpectation.Applied;
      readonly callId: string;
      /** The record's bytes, base64 (as the quarantine holds them). */
      readonly data: string;
      /** Why it fails: the processor's writes are throttled until the stack's ready. */
      readonly fault: string;
    }
  | {
      readonly kind: "poison-record";
      readonly expect: typeof DrillExpectation.Kept;
      readonly reason: string;
      readonly data: string;
    }
  | {
      readonly kind: "job";
      readonly expect: typeof DrillExpectation.Completed;
      readonly queue: DrillQueue;
      readonly callId: string;
      readonly body: string;
      readonly fault: string;
      /** FIFO: its message group. */
      readonly group?: string;
    }
  | {
      readonly kind: "poison-message";
      readonly expect: typeof DrillExpectation.Kept;
      readonly queue: DrillQueue;
      readonly reason: string;
      readonly body: string;
      readonly group?: string;
    };

/** The queues a drill writes to, by their key (resource-names.json). */
export type DrillQueue = "tool_jobs" | "session_jobs" | "stream_failures";

export interface DrillLedger {
  readonly formatVersion: typeof DRILL_LEDGER_FORMAT;
  readonly environment: string;
  readonly region: string;
  readonly seed: number;
  readonly createdAt: string;
  readonly resources: {
    readonly stream: string;
    readonly toolCallsTable: string;
    readonly quarantineBucket: string;
    /** Each queue and its DLQ, by key. */
    readonly queues: Readonly<Record<DrillQueue, { readonly url: string; readonly dlqUrl: string }>>;
  };
  /** The FIFO group whose first jobs stall it while the downstream is down. */
  readonly stalledGroup: string;
  readonly inputs: readonly DrillInput[];
}

/** The ledger file is missing, unreadable or not one a drill wrote. */
export class DrillLedgerError extends Error {
  readonly file: string;
  constructor(file: string, problem: string, options?: ErrorOptions) {
    super(`${file}: ${problem}`, options);
    this.name = "DrillLedgerError";
    this.file = file;
  }
}

export async function writeDrillLedger(file: string, ledger: DrillLedger): Promise<void> {
  await writeFile(file, `${JSON.stringify(ledger, null, 2)}\n`);
}

export async function readDrillLedger(file: string): Promise<DrillLedger> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    throw new DrillLedgerError(
      file,
      `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}): is the drill's stack still running? (it removes the file when it stops)`,
      { cause: error },
    );
  }
  let ledger: Partial<DrillLedger>;
  try {
    ledger = JSON.parse(text) as Partial<DrillLedger>;
  } catch (error) {
    throw new DrillLedgerError(file, `not JSON: ${(error as Error).message}`, { cause: error });
  }
  if (ledger.formatVersion !== DRILL_LEDGER_FORMAT || !Array.isArray(ledger.inputs) || !ledger.resources)
    throw new DrillLedgerError(file, `not a drill ledger (format ${DRILL_LEDGER_FORMAT})`);
  return ledger as DrillLedger;
}
