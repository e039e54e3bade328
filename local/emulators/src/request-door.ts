import type { RunningEmulator } from "./loopback.js";
import { AwsJsonContentType, startAwsJsonProxy } from "./proxy.js";

/**
 * What the door does with one request. The slow and lost answers a network or a loaded service gives,
 * made deterministic: a held request stays open until its client gives up on it (no timer decides).
 */
export const DoorAction = {
  /** Forwarded, and the answer relayed untouched. */
  Pass: "pass",
  /** Never forwarded, never answered: the client waits until it aborts. */
  HoldUnsent: "hold-unsent",
  /** Forwarded and applied upstream, but the answer is never relayed: the client waits until it aborts. */
  HoldAnswer: "hold-answer",
  /** Forwarded and applied upstream, then the connection is reset instead of answering: the SDK retries. */
  LoseAnswer: "lose-answer",
  /**
   * Held unsent until the test calls `releaseHeld()`, then forwarded and applied upstream: a request that
   * reaches the service late (one aborted at the deadline, applied after another invocation moved on). Its
   * answer is relayed if the client still waits for it.
   */
  HoldUntilReleased: "hold-until-released",
} as const;
export type DoorAction = (typeof DoorAction)[keyof typeof DoorAction];

/** What the upstream answered a request released late: its status and, for an error, its `__type`. */
export interface LateAnswer {
  readonly status: number;
  readonly type?: string;
}

export interface RequestDoor extends RunningEmulator {
  /**
   * Forwards every request held by `HoldUntilReleased` so far, in arrival order, and resolves with what the
   * upstream answered each: the service's own verdict on the late request.
   */
  releaseHeld(): Promise<LateAnswer[]>;
  readonly stats: {
    /** Requests held (unsent or answer withheld). */
    held: number;
    /** Held requests whose client closed the connection (gave up, or aborted). */
    abandoned: number;
    /** Requests applied upstream whose connection was reset instead of answered. */
    answersLost: number;
  };
}

/**
 * A loopback proxy in front of an AWS JSON-protocol endpoint (DynamoDB, SQS: 1.0; Kinesis: 1.1) that
 * lets `decide` choose, per request (its X-Amz-Target and body), to pass it, hold it, or lose its answer.
 */
export function startRequestDoor(
  upstream: string,
  decide: (target: string, body: string) => DoorAction,
  contentType: AwsJsonContentType = AwsJsonContentType.V1_0,
): Promise<RequestDoor> {
  const stats = { held: 0, abandoned: 0, answersLost: 0 };
  const late: (() => Promise<LateAnswer>)[] = [];
  return startAwsJsonProxy(upstream, contentType, async (call) => {
    const action = decide(call.target, call.body.toString("utf8"));
    if (action === DoorAction.Pass) return call.pass();
    if (action === DoorAction.HoldUntilReleased) {
      stats.held += 1;
      await new Promise<void>((released) => {
        late.push(async () => {
          const answer = await call.forward();
          const text = await answer.text();
          if (!call.request.socket.destroyed) call.answer(answer.status, text);
          else stats.abandoned += 1;
          released();
          const type = answer.ok ? undefined : String((JSON.parse(text) as { __type?: unknown }).__type);
          return { status: answer.status, ...(type !== undefined ? { type } : {}) };
        });
      });
      return;
    }
    if (action === DoorAction.LoseAnswer) {
      await (await call.forward()).arrayBuffer();
      stats.answersLost += 1;
      call.request.socket.destroy();
      return;
    }
    if (action === DoorAction.HoldAnswer) await (await call.forward()).arrayBuffer();
    stats.held += 1;
    if (call.request.socket.destroyed) {
      stats.abandoned += 1;
      return;
    }
    await new Promise<void>((resolve) =>
      call.request.socket.once("close", () => {
        stats.abandoned += 1;
        resolve();
      }),
    );
  }).then((running) => ({
    ...running,
    stats,
    releaseHeld: async () => {
      const answers: LateAnswer[] = [];
      for (const forward of late.splice(0)) answers.push(await forward());
      return answers;
    },
  }));
}
