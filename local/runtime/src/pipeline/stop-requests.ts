/**
 * What ends a running stack besides its own end: Ctrl-C (SIGINT), `kill` (SIGTERM, also what npm passes on
 * when its own PID is killed), a closed terminal (SIGHUP), and the end of the parent process (npm killed
 * outright: the stack, reparented, would keep serving, orphaned). The first request asks the stack to stop
 * (in-flight invocations finish); a second one while it stops ends the process at once, and the pipeline's
 * exit hook still removes its temporary folder.
 */

export const StopCause = {
  Interrupt: "SIGINT",
  Terminate: "SIGTERM",
  HangUp: "SIGHUP",
  /** The process that started this one is gone (its parent id changed). */
  ParentExited: "parent-exited",
} as const;
export type StopCause = (typeof StopCause)[keyof typeof StopCause];

const SIGNALS = [StopCause.Interrupt, StopCause.Terminate, StopCause.HangUp] as const;

/** The exit status of a process ended by `cause`: 128 + the signal's number, as a shell reports it. */
export function exitStatusOf(cause: StopCause): number {
  switch (cause) {
    case StopCause.Interrupt:
      return 130;
    case StopCause.Terminate:
      return 143;
    case StopCause.HangUp:
    case StopCause.ParentExited:
      return 129;
  }
}

export interface StopRequests {
  /** Resolves with the first request. */
  readonly requested: Promise<StopCause>;
  /** The first request, once there was one. */
  readonly cause: StopCause | undefined;
  /** Stops listening (the signals' default actions apply again). */
  dispose(): void;
}

export interface StopRequestOptions {
  /** How often the parent is looked at (default 1 s; 0: not watched). */
  readonly parentCheckMs?: number;
  /** Called with the second request, before the process exits with its status. */
  readonly onForced?: (cause: StopCause) => void;
}

/** Listens for the requests to stop from now until `dispose`. */
export function watchStopRequests(options: StopRequestOptions = {}): StopRequests {
  let cause: StopCause | undefined;
  let resolve: (cause: StopCause) => void = () => {};
  const requested = new Promise<StopCause>((r) => {
    resolve = r;
  });
  const request = (next: StopCause) => {
    if (cause === undefined) {
      cause = next;
      resolve(next);
      return;
    }
    options.onForced?.(next);
    process.exit(exitStatusOf(next));
  };
  const handlers = SIGNALS.map((signal) => [signal, () => request(signal)] as const);
  for (const [signal, handler] of handlers) process.on(signal, handler);
  const parent = process.ppid;
  const checkMs = options.parentCheckMs ?? 1_000;
  // A process started by init (pid 1) has no parent to lose.
  const watcher =
    checkMs > 0 && parent > 1
      ? setInterval(() => {
          if (process.ppid !== parent) request(StopCause.ParentExited);
        }, checkMs)
      : undefined;
  watcher?.unref();
  return {
    requested,
    get cause() {
      return cause;
    },
    dispose() {
      for (const [signal, handler] of handlers) process.off(signal, handler);
      if (watcher) clearInterval(watcher);
    },
  };
}
