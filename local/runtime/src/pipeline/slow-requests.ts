/**
 * The AWS SDK warns on the console each time a request takes longer than the client's requestTimeout
 * (5 s here) without failing it. On a busy machine the emulators answer slowly and a run would print
 * dozens of these: they are counted instead, and explained once at the end.
 */
const PREFIX = "@smithy/node-http-handler - [WARN] a request has exceeded the configured";

export interface SlowRequests {
  /** How many requests were slow so far. */
  readonly count: () => number;
  /** Puts console.warn back as it was. */
  readonly restore: () => void;
}

export function countSlowRequests(): SlowRequests {
  const original = console.warn;
  let count = 0;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === "string" && args[0].startsWith(PREFIX)) count += 1;
    else original(...args);
  };
  return { count: () => count, restore: () => (console.warn = original) };
}

export function explainSlowRequests(count: number): string | undefined {
  return count === 0
    ? undefined
    : `${count} AWS SDK request(s) to the emulators took longer than 5 s (a busy machine); each one completed, nothing was lost by it`;
}
