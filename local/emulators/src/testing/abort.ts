/** The error the AWS SDK rejects an aborted request with: named `AbortError`, the signal's reason as its cause. */
export function sdkAbortError(signal?: AbortSignal): Error {
  return Object.assign(new Error("Request aborted"), {
    name: "AbortError",
    ...(signal?.reason !== undefined ? { cause: signal.reason } : {}),
  });
}

/**
 * A request that never answers on its own: it rejects as the SDK does (sdkAbortError) once `signal`
 * aborts, at once if it already has, and calls `onAbort` first. For fakes of SDK clients in deadline tests.
 */
export function untilAborted(signal: AbortSignal, onAbort: () => void = () => undefined): Promise<never> {
  return new Promise((_, reject) => {
    const abort = () => {
      onAbort();
      reject(sdkAbortError(signal));
    };
    if (signal.aborted) abort();
    else signal.addEventListener("abort", abort, { once: true });
  });
}
