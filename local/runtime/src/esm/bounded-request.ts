/**
 * The event sources' own requests (stream reads, shard listings, receives, deletes, destination sends)
 * each get a bound. The SDK clients' requestTimeout only warns, and Node's http.Server never times out
 * a request it has read in full (its requestTimeout covers receiving the request only), so a request
 * an emulator accepts and never answers holds its poller for good, or for 300 s when it crosses a
 * loopback proxy built on fetch (undici's headersTimeout). With the poller waits every record behind
 * it: a Kinesis shard, or its children waiting for it (§9.1 item 1). AWS's mappings never wait that
 * long on a read: a failed read is a "before invocation" error, retried (§1.3).
 */

/** A request got no answer within its bound: it was aborted, and the caller retries as for a failed call. */
export class RequestAbandonedError extends Error {
  override readonly name = "RequestAbandonedError";
  readonly operation: string;
  readonly boundMs: number;

  constructor(operation: string, boundMs: number, options?: { cause?: unknown }) {
    super(
      `${operation} got no answer within ${boundMs} ms: abandoned (aborted) and retried; an endpoint that keeps ` +
        "doing this is stuck or overloaded",
      options,
    );
    this.operation = operation;
    this.boundMs = boundMs;
  }
}

/**
 * Runs `send` with a signal that aborts after `boundMs` (or when `stop` aborts). The caller is released
 * at the bound even if the request ignores its signal; it then gets a RequestAbandonedError. A `stop`
 * abort rejects with stop's reason.
 */
export async function sendWithin<T>(
  operation: string,
  boundMs: number,
  send: (signal: AbortSignal) => Promise<T>,
  stop?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  // Built when the bound passes, not per request: an error's stack costs microseconds, and the pollers send
  // thousands of requests a minute (1.2 s of the chaos harness's main thread at 10,000 events).
  let abandoned: RequestAbandonedError | undefined;
  const timer = setTimeout(() => {
    abandoned = new RequestAbandonedError(operation, boundMs);
    controller.abort(abandoned);
  }, boundMs);
  const onStop = () => controller.abort(stop?.reason);
  if (stop?.aborted) onStop();
  else stop?.addEventListener("abort", onStop, { once: true });
  const released = new Promise<never>((_, reject) => {
    const fail = () => reject(controller.signal.reason);
    if (controller.signal.aborted) fail();
    else controller.signal.addEventListener("abort", fail, { once: true });
  });
  const request = send(controller.signal);
  try {
    return await Promise.race([request, released]);
  } catch (error) {
    if (abandoned !== undefined && controller.signal.reason === abandoned) {
      // The SDK's own AbortError (or nothing, if the request ignored the signal) becomes the cause.
      throw error === abandoned ? abandoned : new RequestAbandonedError(operation, boundMs, { cause: error });
    }
    throw error;
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener("abort", onStop);
    // A request released at the bound may still settle later; its outcome no longer matters.
    request.catch(() => undefined);
  }
}
