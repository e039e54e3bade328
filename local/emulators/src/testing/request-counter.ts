import type { InitializeMiddleware, MiddlewareStack } from "@smithy/types";

export interface RequestCounter {
  /** Requests sent per command name, e.g. `{ PutItemCommand: 3 }`. Retries by the SDK count once. */
  readonly byCommand: () => Record<string, number>;
  readonly total: () => number;
  readonly reset: () => void;
}

/**
 * Counts the API calls a client makes against a real endpoint (an emulator), so tests can assert
 * request budgets without faking the SDK.
 */
export function countRequests<I extends object, O extends object>(client: {
  middlewareStack: MiddlewareStack<I, O>;
}): RequestCounter {
  const counts = new Map<string, number>();
  const counter: InitializeMiddleware<I, O> = (next, context) => async (args) => {
    const name = context.commandName ?? "unknown";
    counts.set(name, (counts.get(name) ?? 0) + 1);
    return next(args);
  };
  client.middlewareStack.add(counter, {
    step: "initialize",
    name: `requestCounter-${Math.random().toString(36).slice(2)}`,
  });
  return {
    byCommand: () => Object.fromEntries([...counts.entries()].sort(([a], [b]) => a.localeCompare(b))),
    total: () => [...counts.values()].reduce((a, b) => a + b, 0),
    reset: () => counts.clear(),
  };
}
