import { BatchGetCommand, type DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { describe, expect, it } from "vitest";
import { BatchGetIncompleteError, batchGetAll } from "../../src/index.js";

type Key = { id: string };

/** A fake SDK client (unit test): partial BatchGetItem answers are not reproducible on the emulator. */
function fakeClient(responses: Array<(keys: Key[]) => unknown>) {
  const calls: Key[][] = [];
  const client = {
    send: async (command: unknown) => {
      if (!(command instanceof BatchGetCommand)) throw new Error("unexpected command");
      expect(command.input.RequestItems?.t?.ConsistentRead).toBe(true);
      const keys = command.input.RequestItems?.t?.Keys as Key[];
      calls.push(keys);
      const next = responses.shift();
      if (!next) throw new Error("no more responses");
      return next(keys);
    },
  } as unknown as DynamoDBDocumentClient;
  return { client, calls };
}

const keys = (...ids: string[]): Key[] => ids.map((id) => ({ id }));

describe("batchGetAll: BatchGetItem may answer part of a request (UnprocessedKeys)", () => {
  it("asks again for exactly the unprocessed keys, after a backoff", async () => {
    const sleeps: number[] = [];
    const { client, calls } = fakeClient([
      (k) => ({ Responses: { t: [k[0]] }, UnprocessedKeys: { t: { Keys: k.slice(1) } } }),
      (k) => ({ Responses: { t: k } }),
    ]);
    const items = await batchGetAll<Key>(client, "t", keys("a", "b", "c"), {
      sleep: async (ms: number) => {
        sleeps.push(ms);
      },
    });
    expect(items.map((i) => i.id).sort()).toEqual(["a", "b", "c"]);
    expect(calls.map((c) => c.map((k) => k.id))).toEqual([
      ["a", "b", "c"],
      ["b", "c"],
    ]);
    expect(sleeps).toHaveLength(1);
  });

  it("throws a transient error after the configured retries instead of returning a partial answer", async () => {
    const { client } = fakeClient(
      Array.from({ length: 3 }, () => (k: Key[]) => ({ UnprocessedKeys: { t: { Keys: k } } })),
    );
    const read = batchGetAll(client, "t", keys("a"), { maxRetries: 2, sleep: async () => undefined });
    await expect(read).rejects.toBeInstanceOf(BatchGetIncompleteError);
    await expect(read).rejects.toMatchObject({ kind: "transient", unprocessed: 1 });
  });

  it("splits more than 100 keys into requests of at most 100", async () => {
    const { client, calls } = fakeClient([() => ({}), () => ({}), () => ({})]);
    await batchGetAll(client, "t", keys(...Array.from({ length: 201 }, (_, i) => `k${i}`)));
    expect(calls.map((c) => c.length)).toEqual([100, 100, 1]);
  });

  it("sends nothing for no keys", async () => {
    const { client, calls } = fakeClient([]);
    expect(await batchGetAll(client, "t", [])).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});
