import { DescribeTimeToLiveCommand, UpdateTimeToLiveCommand } from "@aws-sdk/client-dynamodb";
import { type DynamoDBDocumentClient, GetCommand } from "@aws-sdk/lib-dynamodb";
import { dynamoDbDocumentClient } from "@mcp-pipeline/aws";
import {
  createTableWhenActive,
  DoorAction,
  type DynamoDbFidelityProxy,
  emulatorClientOptions,
  type RequestDoor,
  type RunningEmulator,
  startDynamoDb,
  startDynamoDbFidelityProxy,
  startRequestDoor,
} from "@mcp-pipeline/emulators";
import { countRequests, type RequestCounter } from "@mcp-pipeline/emulators/testing";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AlreadyInProgressError,
  ClaimLostError,
  dedupeTableDefinition,
  dedupeTimeToLive,
  IdempotencyStore,
  runOnce,
} from "../../../src/idempotency/index.js";

let dynalite: RunningEmulator;
let proxy: DynamoDbFidelityProxy;
/** Through the fidelity proxy: a failed conditional put carries the blocking item, as on DynamoDB. */
let faithful: { client: DynamoDBDocumentClient; requests: RequestCounter };
/** dynalite as it is: the error has no item, and the store must still work (one GetItem more). */
let bare: { client: DynamoDBDocumentClient; requests: RequestCounter };
let client: DynamoDBDocumentClient;
let requests: RequestCounter;
let clock = Date.parse("2026-11-30T10:00:00Z");
let tableIndex = 0;
let table: string;

const store = (overrides: Partial<ConstructorParameters<typeof IdempotencyStore>[0]> = {}) =>
  new IdempotencyStore({
    client,
    tableName: table,
    scope: "processor",
    retentionSeconds: 86_400,
    now: () => clock,
    ...overrides,
  });

beforeAll(async () => {
  dynalite = await startDynamoDb();
  proxy = await startDynamoDbFidelityProxy(dynalite.endpoint);
  const connect = (endpoint: RunningEmulator) => {
    const c = dynamoDbDocumentClient(emulatorClientOptions(endpoint));
    return { client: c, requests: countRequests(c) };
  };
  faithful = connect(proxy);
  bare = connect(dynalite);
  ({ client, requests } = faithful);
});
afterAll(async () => {
  faithful.client.destroy();
  bare.client.destroy();
  await proxy.stop();
  await dynalite.stop();
});
beforeEach(async () => {
  ({ client, requests } = faithful);
  table = `dedupe-${++tableIndex}`;
  await createTableWhenActive(client, dedupeTableDefinition(table));
  faithful.requests.reset();
  bare.requests.reset();
});

/** Runs a test's body against DynamoDB's answer (the proxy) and against dynalite's (no item in the error). */
const backends = [
  // What the failed claim costs besides its PutItem: nothing on DynamoDB, a GetItem on dynalite.
  {
    name: "DynamoDB (fidelity proxy: the item in the error)",
    use: () => faithful,
    endpoint: () => proxy.endpoint,
    readAfterFailedClaim: {},
  },
  {
    name: "bare dynalite (no item in the error)",
    use: () => bare,
    endpoint: () => dynalite.endpoint,
    readAfterFailedClaim: { GetItemCommand: 1 },
  },
] as const;

describe.each(backends)(
  "two-phase idempotency on $name: request counts per record (docs/idempotency.md)",
  (backend) => {
    beforeEach(() => {
      ({ client, requests } = backend.use());
    });

    it("first delivery: one conditional put to claim, one conditional update to complete", async () => {
      let applied = 0;
      const result = await runOnce(store(), "evt-1", 30_000, async () => {
        applied += 1;
      });
      expect(result).toBe("applied");
      expect(applied).toBe(1);
      expect(requests.byCommand()).toEqual({ PutItemCommand: 1, UpdateItemCommand: 1 });
    });

    it("failure: claim, then a conditional delete releases it so the retry need not wait for the lease", async () => {
      const s = store();
      await expect(
        runOnce(s, "evt-1", 30_000, async () => {
          throw new Error("downstream 503");
        }),
      ).rejects.toThrow("downstream 503");
      expect(requests.byCommand()).toEqual({ DeleteItemCommand: 1, PutItemCommand: 1 });

      requests.reset();
      expect(await runOnce(s, "evt-1", 30_000, async () => undefined)).toBe("applied");
      expect(requests.byCommand()).toEqual({ PutItemCommand: 1, UpdateItemCommand: 1 });
    });

    it("redelivery of completed records: one BatchGetItem per 100 keys and no request per record", async () => {
      const s = store();
      const keys = Array.from({ length: 250 }, (_, i) => `evt-${i}`);
      for (const key of keys) await runOnce(s, key, 30_000, async () => undefined);
      requests.reset();

      const completed = await s.completedAmong(keys);
      expect(completed.size).toBe(250);
      let applied = 0;
      for (const key of keys) {
        const result = await runOnce(
          s,
          key,
          30_000,
          async () => {
            applied += 1;
          },
          completed,
        );
        expect(result).toBe("duplicate");
      }
      expect(applied).toBe(0);
      expect(requests.byCommand()).toEqual({ BatchGetItemCommand: 3 });
    });

    it("a completed key that the prefetch missed is a duplicate: one claim request, the effect not run", async () => {
      const s = store();
      await runOnce(s, "evt-1", 30_000, async () => undefined);
      requests.reset();
      expect(await runOnce(s, "evt-1", 30_000, async () => expect.fail("must not run"))).toBe("duplicate");
      // DynamoDB returns the blocking item with the failed put; dynalite does not, so one GetItem follows.
      expect(requests.byCommand()).toEqual({ PutItemCommand: 1, ...backend.readAfterFailedClaim });
    });

    it("two concurrent deliveries: the effect runs once and the loser gets AlreadyInProgressError with the winner's lease", async () => {
      const s = store();
      let applied = 0;
      let releaseWinner: () => void = () => undefined;
      let winner: Promise<unknown> = Promise.resolve();
      await new Promise<void>((started) => {
        winner = runOnce(s, "evt-1", 30_000, async () => {
          applied += 1;
          started();
          await new Promise<void>((r) => {
            releaseWinner = r;
          });
        });
      });
      const loser = runOnce(s, "evt-1", 30_000, async () => {
        applied += 1;
      });
      await expect(loser).rejects.toBeInstanceOf(AlreadyInProgressError);
      await expect(loser).rejects.toMatchObject({ kind: "transient", leaseExpiresAt: clock + 30_000 });
      releaseWinner();
      expect(await winner).toBe("applied");
      expect(applied).toBe(1);
      // Winner: put + update. Loser: put (+ get on dynalite, see above).
      expect(requests.byCommand()).toEqual({
        PutItemCommand: 2,
        UpdateItemCommand: 1,
        ...backend.readAfterFailedClaim,
      });
      expect(await runOnce(s, "evt-1", 30_000, async () => expect.fail("must not run"))).toBe("duplicate");
    });
  },
);

describe.each(backends)(
  "leases and expiry are checked in code (DynamoDB TTL deletes late), on $name",
  (backend) => {
    beforeEach(() => {
      ({ client, requests } = backend.use());
    });

    it("lets another invocation claim a key whose lease has ended, and the late completion is refused", async () => {
      const s = store();
      const first = await s.claim("evt-1", 1_000);
      if (first.status !== "claimed") throw new Error("expected a claim");
      clock += 1_001;
      const second = await s.claim("evt-1", 1_000);
      expect(second.status).toBe("claimed");
      await expect(s.complete(first.claim)).rejects.toBeInstanceOf(ClaimLostError);
      if (second.status === "claimed") await s.complete(second.claim);
      expect((await s.claim("evt-1", 1_000)).status).toBe("completed");
    });

    it("a completion refused on a row another claim completed is lost, not taken for this claim's own", async () => {
      const s = store();
      const first = await s.claim("evt-1", 1_000);
      if (first.status !== "claimed") throw new Error("expected a claim");
      clock += 1_001;
      const second = await s.claim("evt-1", 1_000);
      if (second.status !== "claimed") throw new Error("expected a claim");
      await s.complete(second.claim);
      // The row is COMPLETED, as after this claim's own completion applied with its answer lost; only the
      // token tells them apart.
      await expect(s.complete(first.claim)).rejects.toBeInstanceOf(ClaimLostError);
    });

    it("forgets a completed key once its retention has passed, even though the row still exists", async () => {
      const s = store({ retentionSeconds: 60 });
      await runOnce(s, "evt-1", 1_000, async () => undefined);
      expect((await s.completedAmong(["evt-1"])).has("evt-1")).toBe(true);
      clock += 61_000;
      expect((await s.completedAmong(["evt-1"])).size).toBe(0);
      expect(await runOnce(s, "evt-1", 1_000, async () => undefined)).toBe("applied");
    });

    it("keeps scopes apart in one table", async () => {
      await runOnce(store({ scope: "processor" }), "k", 1_000, async () => undefined);
      expect(await runOnce(store({ scope: "tool-worker" }), "k", 1_000, async () => undefined)).toBe(
        "applied",
      );
    });

    it.each([Number.NaN, Number.POSITIVE_INFINITY])(
      "refuses a lease of %s ms with a RangeError before any request (the row would hold no lease)",
      async (leaseMs) => {
        requests.reset();
        await expect(store().claim("evt-1", leaseMs)).rejects.toThrow(
          new RangeError(`leaseMs must be a finite number of milliseconds, got ${leaseMs}`),
        );
        expect(requests.byCommand()).toEqual({});
      },
    );

    it.each([
      [{ retentionSeconds: 59 }, /retentionSeconds/],
      [{ retentionSeconds: 1.5 }, /retentionSeconds/],
      [{ scope: "" }, /scope/],
      [{ scope: "a#b" }, /scope/],
    ])("rejects bad options %o", (options, message) => {
      expect(() => store(options)).toThrow(message);
    });
  },
);

describe.each(backends)(
  "a write applied at the server whose answer was lost: the SDK's retry sees its own row, on $name",
  (backend) => {
    /** The backend behind a door that resets the connection after the first `operation` reached the table. */
    async function losingFirst(operation: "PutItem" | "UpdateItem") {
      let lost = 0;
      const door: RequestDoor = await startRequestDoor(backend.endpoint(), (target) => {
        if (target !== `DynamoDB_20120810.${operation}` || lost > 0) return DoorAction.Pass;
        lost += 1;
        return DoorAction.LoseAnswer;
      });
      const c = dynamoDbDocumentClient(emulatorClientOptions(door));
      return { door, client: c, requests: countRequests(c) };
    }

    it("a claim applied but unanswered is this claim: claimed, not in progress elsewhere", async () => {
      const through = await losingFirst("PutItem");
      client = through.client;
      try {
        const s = store();
        const claimed = await s.claim("evt-1", 30_000);
        expect(through.door.stats.answersLost).toBe(1);
        // The SDK sent the put again; its condition failed on the row the first one wrote.
        expect(through.requests.byCommand()).toEqual({ PutItemCommand: 1, ...backend.readAfterFailedClaim });
        expect(claimed.status).toBe("claimed");
        if (claimed.status === "claimed") await s.complete(claimed.claim);
        expect((await s.claim("evt-1", 30_000)).status).toBe("completed");
      } finally {
        through.client.destroy();
        await through.door.stop();
      }
    });

    it("a completion applied but unanswered is this completion: done, not a lost claim", async () => {
      const through = await losingFirst("UpdateItem");
      client = through.client;
      try {
        const s = store();
        expect(await runOnce(s, "evt-1", 30_000, async () => undefined)).toBe("applied");
        expect(through.door.stats.answersLost).toBe(1);
        expect(await runOnce(s, "evt-1", 30_000, async () => expect.fail("must not run"))).toBe("duplicate");
      } finally {
        through.client.destroy();
        await through.door.stop();
      }
    });
  },
);

describe("the dedupe table's TTL", () => {
  it("names the field every completed row carries: epoch seconds, the retention after completion", async () => {
    // Prepare: the table's TTL as the local pipeline and Terraform set it.
    await client.send(new UpdateTimeToLiveCommand(dedupeTimeToLive(table)));
    const { TimeToLiveDescription } = await client.send(new DescribeTimeToLiveCommand({ TableName: table }));
    const attribute = TimeToLiveDescription?.AttributeName;
    // Act
    await runOnce(store(), "evt-ttl", 30_000, async () => undefined);
    // Assess: DynamoDB deletes the row by this attribute only once its retention has passed.
    const { Item } = await client.send(
      new GetCommand({ TableName: table, Key: { id: "processor#evt-ttl" } }),
    );
    expect(attribute).toBeDefined();
    expect(Item?.[attribute as string]).toBe(Math.floor(clock / 1000) + 86_400);
  });
});
