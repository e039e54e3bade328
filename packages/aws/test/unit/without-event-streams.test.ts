import { NodeHttpHandler } from "@smithy/node-http-handler";
import { describe, expect, it } from "vitest";
import {
  EventStreamMarshaller,
  EventStreamSerde,
  eventStreamSerdeProvider,
  NO_EVENT_STREAMS,
  NodeHttp2Handler,
} from "../../src/without-event-streams.js";

// What a function's bundle holds in place of the SDK's event-stream marshaller and HTTP/2 handler
// (tools/bundler/src/bundle-function.ts); scripts/test/integration/build.test.ts runs the bundles that use it.

describe("the bundles' stand-ins for event streams", () => {
  it("build a marshaller as every client does, which refuses to read or write an event stream", () => {
    const marshaller = eventStreamSerdeProvider({
      utf8Encoder: (input: Uint8Array) => new TextDecoder().decode(input),
      utf8Decoder: (input: string) => new TextEncoder().encode(input),
    });
    expect(marshaller).toBeInstanceOf(EventStreamMarshaller);
    const events = (async function* () {})();
    expect(() => marshaller.serialize(events, () => undefined as never)).toThrow(NO_EVENT_STREAMS);
    expect(() => marshaller.deserialize(undefined, async () => undefined as never)).toThrow(NO_EVENT_STREAMS);
  });

  it("refuse to build the serde that an HTTP protocol loads for an operation with an event stream", () => {
    expect(() => new EventStreamSerde()).toThrow(NO_EVENT_STREAMS);
  });

  it("use the HTTP/1.1 handler a client is given, as NodeHttp2Handler.create does", () => {
    const handler = new NodeHttpHandler();
    expect(NodeHttp2Handler.create(handler)).toBe(handler);
  });

  it("refuse a client without a handler, which would have defaulted to HTTP/2, with the cause", () => {
    // What the Kinesis client passes when it is built without `requestHandler`: a provider of options.
    const provider = async () => ({ disableConcurrentStreams: true });
    expect(() => NodeHttp2Handler.create(provider)).toThrow(/built without a requestHandler/);
    expect(() => NodeHttp2Handler.create()).toThrow(NO_EVENT_STREAMS);
    expect(() => NodeHttp2Handler.create({ requestTimeout: 1_000 })).toThrow(NO_EVENT_STREAMS);
  });
});
