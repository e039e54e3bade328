import type {
  EventStreamSerdeProvider,
  EventStreamMarshaller as Marshaller,
  RequestHandler,
} from "@smithy/types";

// What a function's bundle holds in place of the SDK's event-stream machinery: tools/bundler
// (bundle-function.ts) resolves @smithy/core's Node event-stream marshaller, the event-stream module that its
// HTTP protocol loads on first use, and @smithy/node-http-handler's HTTP/2 handler to this module. Event
// streams are what a few operations answer with (Kinesis's SubscribeToShard, S3's SelectObjectContent), and
// Kinesis's client defaults to HTTP/2 for SubscribeToShard alone; no function calls them. Yet every client
// builds its marshaller when it is constructed, and the Kinesis client names the HTTP/2 handler, so the
// event-stream codec and node:http2 (about 21 KiB, and Node's HTTP/2 module, the costliest of its modules to
// load) were evaluated at every cold start of the workers and dlq-redrive (docs/benchmarks/cold-start.md).
// Tests and tools run the SDK's own modules: only bundles use this.

/** Why an event stream cannot be read or written: what the bundle left out, so that the cause is plain. */
export const NO_EVENT_STREAMS =
  "event streams (Kinesis SubscribeToShard, S3 SelectObjectContent) are not bundled into a function: " +
  "tools/bundler leaves out the SDK's event-stream codec and HTTP/2 handler " +
  "(packages/aws/src/without-event-streams.ts)";

/** The SDK's marshaller, built by every client: building one costs nothing, using it fails. */
export class EventStreamMarshaller implements Marshaller {
  deserialize(): never {
    throw new Error(NO_EVENT_STREAMS);
  }

  serialize(): never {
    throw new Error(NO_EVENT_STREAMS);
  }
}

/**
 * In place of @smithy/core's `EventStreamSerde`, which its HTTP protocol loads (a dynamic import of
 * @smithy/core/event-streams, the codec and all) only for an operation with an event stream.
 */
export class EventStreamSerde {
  constructor() {
    throw new Error(NO_EVENT_STREAMS);
  }
}

/** Same name and shape as @smithy/core's `eventStreamSerdeProvider`, which every client's configuration calls. */
export const eventStreamSerdeProvider: EventStreamSerdeProvider = () => new EventStreamMarshaller();

const isHandler = <H>(value: unknown): value is H =>
  typeof value === "object" && value !== null && "handle" in value && typeof value.handle === "function";

/**
 * In place of @smithy/node-http-handler's `NodeHttp2Handler`, whose `create` the Kinesis client calls with its
 * `requestHandler`: an HTTP handler given (packages/aws's client factories always give one, HTTP/1.1) is used
 * as it is; without one, the client would have defaulted to HTTP/2, which the bundle does not hold.
 */
export const NodeHttp2Handler = {
  create<H extends RequestHandler<unknown, unknown>>(instanceOrOptions?: H | object): H {
    if (isHandler<H>(instanceOrOptions)) return instanceOrOptions;
    throw new Error(
      "a client that defaults to HTTP/2 was built without a requestHandler: build it with @mcp-pipeline/aws's " +
        `factories, which give an HTTP/1.1 handler; ${NO_EVENT_STREAMS}`,
    );
  },
};
