import { describe, expect, it } from "vitest";
import {
  journalCoverage,
  parseReplayJournal,
  type ReadJournal,
  ReplayJournalFormatError,
  splitJournal,
} from "../../src/replay-journal.js";

/**
 * The replay journal's format and what a scan takes from it (src/replay-journal.ts): a journal is used only
 * whole and valid, and stands only for objects that are listed and were stored no later than it.
 */

const record = (sequenceNumber: string) => ({
  formatVersion: 1 as const,
  source: {
    kind: "kinesis" as const,
    streamArn: "arn:aws:kinesis:us-east-1:123456789012:stream/tool-call-events",
    shardId: "shardId-000000000000",
    sequenceNumber,
    partitionKey: "session-1",
    approximateArrivalTimestamp: 1_796_032_800.5,
  },
  data: "eyJuIjoxfQ==",
  reason: { code: "RetryAttemptsExhausted", message: "given up" },
  quarantinedAt: "2026-12-01T10:00:00.000Z",
  quarantinedBy: "dlq-redrive",
});

const journal = (objects: unknown) => ({
  formatVersion: 1,
  kind: "replay-journal",
  writtenAt: "2026-12-07T10:00:00.000Z",
  streamName: "tool-call-events",
  objects,
});

const bytes = (value: unknown) =>
  new TextEncoder().encode(typeof value === "string" ? value : JSON.stringify(value));

const marked = (key: string, sequenceNumber: string) => ({
  key,
  record: record(sequenceNumber),
  replayedAt: "2026-12-07T09:59:59.000Z",
  replaySequenceNumber: "4960",
});

describe("parseReplayJournal", () => {
  it("gives back each object's record as the quarantine reader checks it, unknown keys dropped", () => {
    const parsed = parseReplayJournal(
      "replays/a.json",
      bytes(journal([{ ...marked("kinesis/a/1.json", "1"), extra: true }])),
    );
    expect(parsed.objects).toEqual([marked("kinesis/a/1.json", "1")]);
  });

  it.each([
    ["not UTF-8", new Uint8Array([0xff, 0xfe]), /not UTF-8 JSON/],
    ["not JSON", bytes("{nope"), /not UTF-8 JSON/],
    ["another version", bytes({ ...journal([]), formatVersion: 2 }), /formatVersion/],
    ["objects not a list", bytes(journal({})), /objects: Expected array/],
    [
      "an object without its mark",
      bytes(journal([{ key: "k", record: record("1") }])),
      /objects\.0: replayedAt/,
    ],
    [
      "a record the format refuses",
      bytes(journal([{ ...marked("k", "1"), record: { ...record("1"), data: 7 } }])),
      /objects\.0\.record: data/,
    ],
  ])("refuses a journal %s, naming it", (_, body, message) => {
    const error = (() => {
      try {
        parseReplayJournal("replays/bad.json", body);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(ReplayJournalFormatError);
    expect((error as Error).message).toMatch(
      /^replay journal replays\/bad\.json is not a v1 replay journal: /,
    );
    expect((error as Error).message).toMatch(message);
  });
});

describe("journalCoverage", () => {
  const read = (
    key: string,
    lastModified: number | undefined,
    objects: ReturnType<typeof marked>[],
  ): ReadJournal => ({
    key,
    lastModified,
    journal: { ...parseReplayJournal(key, bytes(journal(objects))) },
  });

  it("stands for a listed object stored in an earlier second than the journal, not one of its second, later or gone", () => {
    // S3 dates a listed object to the second (docs/aws-semantics.md §11 "Listing"): an object of the
    // journal's own second may have been stored after it, and is read.
    const coverage = journalCoverage(
      [
        { key: "kinesis/old.json", lastModified: 1_000 },
        { key: "kinesis/second-before.json", lastModified: 1_999 },
        { key: "kinesis/same-instant.json", lastModified: 2_000 },
        { key: "kinesis/same-second.json", lastModified: 2_999 },
        { key: "kinesis/stored-again.json", lastModified: 3_000 },
        { key: "kinesis/never-journaled.json", lastModified: 1_000 },
      ],
      [
        read("replays/1.json", 2_500, [
          marked("kinesis/old.json", "1"),
          marked("kinesis/second-before.json", "5"),
          marked("kinesis/same-instant.json", "2"),
          marked("kinesis/same-second.json", "6"),
          marked("kinesis/stored-again.json", "3"),
          marked("kinesis/expired.json", "4"),
        ]),
      ],
    );
    expect([...coverage.keys()].sort()).toEqual(["kinesis/old.json", "kinesis/second-before.json"]);
  });

  it("takes nothing from a journal or an object the endpoint does not date", () => {
    expect(
      journalCoverage(
        [
          { key: "kinesis/a.json", lastModified: 1_000 },
          { key: "kinesis/b.json", lastModified: undefined },
        ],
        [
          read("replays/undated.json", undefined, [marked("kinesis/a.json", "1")]),
          read("replays/dated.json", 5_000, [marked("kinesis/b.json", "2")]),
        ],
      ).size,
    ).toBe(0);
  });

  it("where two journals name an object, keeps the mark with the latest replayedAt, not the later journal's", () => {
    // Two replays marked it, and the one that marked last stored its journal first: the tags hold the
    // latest mark.
    const latest = {
      ...marked("kinesis/a.json", "1"),
      replayedAt: "2026-12-07T11:00:00.000Z",
      replaySequenceNumber: "4970",
    };
    const earlier = { ...marked("kinesis/a.json", "1"), replayedAt: "2026-12-07T10:00:00.000Z" };
    for (const journals of [
      [read("replays/2.json", 9_000, [earlier]), read("replays/1.json", 2_000, [latest])],
      [read("replays/1.json", 2_000, [latest]), read("replays/2.json", 9_000, [earlier])],
      [read("replays/2.json", 9_000, [latest]), read("replays/1.json", 2_000, [earlier])],
    ])
      expect(
        journalCoverage([{ key: "kinesis/a.json", lastModified: 1_000 }], journals).get("kinesis/a.json"),
      ).toEqual(latest);
  });

  it("where two journals name an object with the same mark time, keeps the later journal's", () => {
    const first = marked("kinesis/a.json", "1");
    const second = { ...first, replaySequenceNumber: "4971" };
    for (const journals of [
      [read("replays/1.json", 2_000, [first]), read("replays/2.json", 9_000, [second])],
      [read("replays/2.json", 9_000, [second]), read("replays/1.json", 2_000, [first])],
    ])
      expect(
        journalCoverage([{ key: "kinesis/a.json", lastModified: 1_000 }], journals).get("kinesis/a.json"),
      ).toEqual(second);
  });
});

describe("splitJournal", () => {
  const header = {
    formatVersion: 1 as const,
    kind: "replay-journal" as const,
    writtenAt: "2026-12-07T10:00:00.000Z",
    streamName: "tool-call-events",
  };
  const withData = (i: number, bytes: number) => {
    const object = marked(`kinesis/a/${i}.json`, String(i));
    return { ...object, record: { ...object.record, data: "A".repeat(bytes) } };
  };
  const sizeOf = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

  it("keeps each journal under the cap, every object once and in order, each journal one a scan can read", () => {
    const objects = Array.from({ length: 40 }, (_, i) => withData(i, 100 + 37 * i));
    const cap = 8 * 1024;
    const journals = splitJournal(header, objects, cap);
    expect(journals.length).toBeGreaterThan(1);
    for (const journal of journals) {
      expect(sizeOf(journal)).toBeLessThanOrEqual(cap);
      expect(parseReplayJournal("replays/x.json", bytes(journal)).objects).toEqual(journal.objects);
      expect(journal).toMatchObject(header);
    }
    expect(journals.flatMap((j) => j.objects)).toEqual(objects);
    // Greedy: no journal but the last could have taken the next object.
    for (const [i, journal] of journals.slice(0, -1).entries()) {
      const next = journals[i + 1]?.objects[0];
      expect(sizeOf({ ...journal, objects: [...journal.objects, next] })).toBeGreaterThan(cap);
    }
  });

  it("gives an object larger than the cap a journal of its own", () => {
    const objects = [withData(0, 100), withData(1, 10_000), withData(2, 100), withData(3, 100)];
    const journals = splitJournal(header, objects, 4 * 1024);
    expect(journals.map((j) => j.objects.map((o) => o.key))).toEqual([
      ["kinesis/a/0.json"],
      ["kinesis/a/1.json"],
      ["kinesis/a/2.json", "kinesis/a/3.json"],
    ]);
  });

  it("writes a chunk of small records as one journal, and none for no object", () => {
    const objects = Array.from({ length: 500 }, (_, i) => withData(i, 2_800));
    expect(splitJournal(header, objects)).toHaveLength(1);
    expect(splitJournal(header, [])).toEqual([]);
  });
});
