// The retry backoff's policy (src/redelivery-backoff.ts): pure, so its values are tables and properties.

import { sqsRecord } from "@mcp-pipeline/emulators/testing";
import { seededRandom } from "@mcp-pipeline/retry";
import type { SQSRecord } from "aws-lambda";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  backoffSeconds,
  planVisibilityChanges,
  type RedeliveryBackoff,
} from "../../src/redelivery-backoff.js";

const DEV: RedeliveryBackoff = { baseMs: 5_000, capMs: 120_000, maxReceiveCount: 5 };
const almostOne = () => 0.999_999;

describe("backoffSeconds: 0 to min(cap, base x 2^(receives - 1)), whole seconds", () => {
  it.each([
    // receives, random, seconds
    [1, almostOne, 5],
    [2, almostOne, 10],
    [3, almostOne, 20],
    [4, almostOne, 40],
    [5, almostOne, 80],
    [6, almostOne, 120], // 160 s capped at 120 s
    [30, almostOne, 120],
    [1, () => 0, 0],
    [4, () => 0.5, 20],
  ])("received %i times, random %o: %i s", (attempt, random, seconds) => {
    expect(backoffSeconds(attempt, DEV, random)).toBe(seconds);
  });

  it("never passes the cap's whole seconds nor the doubled ceiling, and is a whole number >= 0", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 43_200_000 }),
        fc.integer({ min: 0, max: 43_200_000 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (attempt, baseMs, extraMs, r) => {
          const backoff = { baseMs, capMs: Math.min(43_200_000, baseMs + extraMs) };
          const seconds = backoffSeconds(attempt, backoff, () => r);
          expect(Number.isInteger(seconds)).toBe(true);
          expect(seconds).toBeGreaterThanOrEqual(0);
          expect(seconds).toBeLessThanOrEqual(Math.floor(backoff.capMs / 1000));
          expect(seconds * 1000).toBeLessThanOrEqual(
            Math.min(backoff.capMs, baseMs * 2 ** (attempt - 1)) + 500,
          );
        },
      ),
    );
  });

  it("a seeded random gives the same draws: reproducible backoffs", () => {
    const draw = (seed: number) => {
      const random = seededRandom(seed);
      return [1, 2, 3, 4].map((attempt) => backoffSeconds(attempt, DEV, random));
    };
    expect(draw(7)).toEqual(draw(7));
  });
});

const standard = (id: string, receives: number) =>
  sqsRecord({ messageId: id, body: "{}", receiveCount: receives });
const fifo = (id: string, group: string, receives: number) =>
  sqsRecord({ messageId: id, body: "{}", receiveCount: receives, groupId: group });

describe("planVisibilityChanges, standard queue: each message by its own receive count", () => {
  it("every reported message gets its backoff, with its receipt handle; one at its last receive gets none (§2.3)", () => {
    const changes = planVisibilityChanges(
      [standard("m1", 1), standard("m2", 3), standard("m3", 5), standard("m4", 9)],
      "standard",
      DEV,
      almostOne,
    );
    expect(changes).toEqual([
      { messageId: "m1", receiptHandle: "handle-m1", visibilityTimeoutSeconds: 5 },
      { messageId: "m2", receiptHandle: "handle-m2", visibilityTimeoutSeconds: 20 },
    ]);
  });

  it("a malformed message reported for retry (its DLQ refused it) without attributes is planned as a first receive, not thrown over (issue 24)", () => {
    const { attributes: _none, ...noAttributes } = standard("m1", 3);
    const changes = planVisibilityChanges([noAttributes as SQSRecord], "fifo", DEV, almostOne);
    expect(changes).toEqual([{ messageId: "m1", receiptHandle: "handle-m1", visibilityTimeoutSeconds: 5 }]);
  });

  it("without maxReceiveCount every reported message gets a backoff", () => {
    const { maxReceiveCount: _, ...unbounded } = DEV;
    const changes = planVisibilityChanges(
      [standard("m1", 5), standard("m2", 6)],
      "standard",
      unbounded,
      almostOne,
    );
    expect(changes.map((c) => c.visibilityTimeoutSeconds)).toEqual([80, 120]);
  });
});

describe("planVisibilityChanges, FIFO queue: a group's messages come back together, in order (§3, §2.6)", () => {
  it("one timeout per group, from its first reported message; a group whose first is at its last receive gets none", () => {
    const changes = planVisibilityChanges(
      [
        fifo("a1", "a", 2),
        fifo("b1", "b", 5),
        fifo("a2", "a", 1),
        fifo("c1", "c", 1),
        fifo("b2", "b", 1),
        fifo("a3", "a", 1),
      ],
      "fifo",
      DEV,
      almostOne,
    );
    expect(changes).toEqual([
      { messageId: "a1", receiptHandle: "handle-a1", visibilityTimeoutSeconds: 10 },
      { messageId: "a2", receiptHandle: "handle-a2", visibilityTimeoutSeconds: 10 },
      { messageId: "a3", receiptHandle: "handle-a3", visibilityTimeoutSeconds: 10 },
      { messageId: "c1", receiptHandle: "handle-c1", visibilityTimeoutSeconds: 5 },
    ]);
  });

  it("a record without a group stands alone, as the batch engine keys it", () => {
    const loose = sqsRecord({ messageId: "x1", body: "{}", receiveCount: 1 });
    const other = sqsRecord({ messageId: "x2", body: "{}", receiveCount: 5 });
    expect(planVisibilityChanges([loose, other], "fifo", DEV, almostOne).map((c) => c.messageId)).toEqual([
      "x1",
    ]);
  });

  it("property: no later message of a group is visible before an earlier one, and no group is split", () => {
    const batch = fc.array(
      fc.record({ group: fc.constantFrom("g1", "g2", "g3"), receives: fc.integer({ min: 1, max: 6 }) }),
      {
        maxLength: 10,
      },
    );
    fc.assert(
      fc.property(batch, fc.integer(), (items, seed) => {
        const records = items.map((item, i) => fifo(`m${i}`, item.group, item.receives));
        const changes = planVisibilityChanges(records, "fifo", DEV, seededRandom(seed));
        const timeout = new Map(changes.map((c) => [c.messageId, c.visibilityTimeoutSeconds]));
        for (const group of ["g1", "g2", "g3"]) {
          const members = records.filter((r) => r.attributes.MessageGroupId === group);
          const given = members.map((r) => timeout.get(r.messageId));
          // All or none of a group; all the same timeout.
          expect(new Set(given).size).toBeLessThanOrEqual(1);
          const head = members[0];
          if (head && Number(head.attributes.ApproximateReceiveCount) >= 5) expect(given[0]).toBeUndefined();
        }
      }),
    );
  });
});
