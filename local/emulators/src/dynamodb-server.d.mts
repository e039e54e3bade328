import type { Server } from "node:http";

export interface DynamoDbDelays {
  /** How long a new table stays CREATING (dynalite's createTableMs). */
  readonly createTableMs?: number;
  readonly deleteTableMs?: number;
  readonly updateTableMs?: number;
}

export function createDynamoDbServer(delays?: DynamoDbDelays): Server;
