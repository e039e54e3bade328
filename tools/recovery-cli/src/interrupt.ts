/**
 * Ctrl-C, SIGTERM and SIGHUP while a command runs. The first asks it to stop at its next step: a redrive
 * or a peek makes the messages it holds visible again (otherwise they would stay hidden for the hold, and
 * the same command run again would find nothing to move), a replay marks what it wrote; then the command
 * says what it did and how to go on, and exits 128 + the signal's number. A second signal ends the process
 * at once.
 */
import { constants } from "node:os";
import { HOLD_SECONDS, InterruptedError, interruption } from "@mcp-pipeline/recovery";

const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/**
 * The exit status of a command stopped by a signal, as a shell reports it: 128 + its number (130 for
 * Ctrl-C), from the InterruptedError or the aborted signal that carries it.
 */
export function interruptedStatus(stop: InterruptedError | AbortSignal | undefined): number {
  const error = stop instanceof AbortSignal ? interruption(stop) : stop;
  const name = (error?.signal ?? "SIGINT") as NodeJS.Signals;
  return 128 + (constants.signals[name] ?? constants.signals.SIGINT);
}

/** An AbortSignal that the process's first stop signal aborts with an InterruptedError. */
export function processInterrupt(write: (text: string) => void): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      write(
        `${signal} again: stopping now; messages this run held stay hidden for up to ${HOLD_SECONDS} s, then come back`,
      );
      process.exit(128 + (constants.signals[signal] ?? 0));
    }
    write(
      `${signal}: stopping after the current step (what it holds is released, what it wrote is marked); again to stop at once`,
    );
    controller.abort(new InterruptedError(signal));
  };
  for (const signal of SIGNALS) process.on(signal, onSignal);
  return controller.signal;
}
