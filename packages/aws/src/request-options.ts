/**
 * Per-call options of the stores and senders built on the SDK. `signal` aborts the call's requests (the
 * SDK's own retries included: an aborted request is not retried, and a retry's wait ends with the
 * signal); the caller then gets the SDK's `AbortError`, a transient failure of that call.
 */
export interface RequestOptions {
  readonly signal?: AbortSignal;
}

/** The SDK `send` options for a call's options: `{ abortSignal }`, or nothing. */
export function sendOptions(options: RequestOptions = {}): { abortSignal?: AbortSignal } {
  return options.signal ? { abortSignal: options.signal } : {};
}
