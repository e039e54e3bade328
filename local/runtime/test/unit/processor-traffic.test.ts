/** The live pipeline's count of the processor's DynamoDB requests and of the stream records it received. */
import { describe, expect, it } from "vitest";
import { ProcessorTraffic } from "../../src/pipeline/processor-traffic.js";

const batch = (...ids: string[]) => ({ Records: ids.map((eventID) => ({ eventID })) });

describe("ProcessorTraffic", () => {
  it("tells a record's first delivery from its redeliveries by eventID (shardId:sequenceNumber)", () => {
    const traffic = new ProcessorTraffic();
    traffic.delivered(batch("shard-0:1", "shard-0:2", "shard-1:1"));
    // A retried batch from the checkpoint (§1.4), then a bisected half of it.
    traffic.delivered(batch("shard-0:2"));
    traffic.delivered(batch("shard-0:2", "shard-0:3"));
    const counts = traffic.counts();
    expect(counts.firstDeliveries).toBe(4);
    expect(counts.redeliveries).toBe(2);
  });

  it("counts requests by operation, and the ones a fault answered apart (they never reached DynamoDB)", () => {
    const traffic = new ProcessorTraffic();
    traffic.request("DynamoDB_20120810.BatchGetItem", false);
    traffic.request("DynamoDB_20120810.PutItem", false);
    traffic.request("DynamoDB_20120810.PutItem", false);
    traffic.request("DynamoDB_20120810.PutItem", true);
    traffic.delivered(batch("shard-0:1", "shard-0:2", "shard-0:3", "shard-0:4"));
    expect(traffic.counts()).toEqual({
      byOperation: { BatchGetItem: 1, PutItem: 2 },
      requests: 3,
      refusedByFault: 1,
      firstDeliveries: 4,
      redeliveries: 0,
      requestsPerNewRecord: 0.75,
    });
  });

  it("reads an invocation without records as none, and a run without deliveries as 0 per record", () => {
    const traffic = new ProcessorTraffic();
    traffic.delivered({});
    traffic.delivered(undefined);
    expect(traffic.counts().requestsPerNewRecord).toBe(0);
    expect(traffic.counts().firstDeliveries).toBe(0);
  });
});
