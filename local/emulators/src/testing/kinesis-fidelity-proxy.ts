import { randomBytes } from "node:crypto";
import type { RunningEmulator } from "../loopback.js";
import { AwsJsonContentType, type ProxiedCall, startAwsJsonProxy } from "../proxy.js";

/**
 * How long a shard iterator stays valid on Kinesis: "A shard iterator expires 5 minutes after it is
 * returned to the requester" (Kinesis API reference, GetShardIterator). kinesalite never expires one.
 */
export const SHARD_ITERATOR_LIFETIME_MS = 300_000;

/** Kinesis operations the proxy can make fail, by their X-Amz-Target name. */
export const KinesisOperation = {
  GetShardIterator: "GetShardIterator",
  GetRecords: "GetRecords",
  ListShards: "ListShards",
} as const;
export type KinesisOperation = (typeof KinesisOperation)[keyof typeof KinesisOperation];

/** The errors Kinesis documents for those operations that a caller must survive by retrying. */
export const KinesisRetryableError = {
  /** The per-shard read rate (5 GetRecords / 5 GetShardIterator per second) was exceeded. */
  Throughput: "ProvisionedThroughputExceededException",
  /** Too many concurrent control-plane calls (ListShards). */
  LimitExceeded: "LimitExceededException",
  InternalFailure: "InternalFailureException",
} as const;
export type KinesisRetryableError = (typeof KinesisRetryableError)[keyof typeof KinesisRetryableError];

export interface KinesisFidelityProxyOptions {
  /** A shard iterator expires this long after it is returned (default 5 minutes, as on Kinesis). */
  readonly iteratorLifetimeMs?: number;
  /** The proxy's clock, so a test can age iterators without waiting. */
  readonly now?: () => number;
}

export interface KinesisFidelityProxy extends RunningEmulator {
  /** Every shard iterator returned so far is expired from now on, as if its lifetime had passed. */
  expireIterators(): void;
  /** The next `count` calls of `operation` are answered with `error` (HTTP 400) instead of forwarded. */
  failNext(operation: KinesisOperation, count: number, error?: KinesisRetryableError): void;
  readonly stats: {
    /** Shard iterators returned (by GetShardIterator and as NextShardIterator). */
    issuedIterators: number;
    /** GetRecords calls answered with ExpiredIteratorException. */
    expiredIteratorAnswers: number;
    /** Calls answered with an injected error, per operation. */
    injected: Record<string, number>;
  };
}

interface IssuedIterator {
  readonly upstream: string;
  readonly issuedAt: number;
  /** Order of issue: `expireIterators()` expires every serial below the next one. */
  readonly serial: number;
}

/**
 * A loopback proxy in front of a Kinesis endpoint (kinesalite) that answers the way Kinesis does where
 * kinesalite is kinder:
 * - shard iterators expire `iteratorLifetimeMs` after they are returned, and GetRecords on an expired
 *   one answers ExpiredIteratorException (each NextShardIterator is a new iterator with its own
 *   lifetime); `expireIterators()` ages every iterator at once so tests need not wait;
 * - `failNext` throttles or fails GetShardIterator, GetRecords or ListShards calls, the "before
 *   invocation" errors Lambda retries without counting them as attempts (docs/aws-semantics.md §1.3).
 * The proxy hands out its own iterator tokens and keeps the upstream ones; every other call passes
 * through untouched. JSON protocol only (what the SDK's Kinesis client speaks).
 */
export async function startKinesisFidelityProxy(
  upstream: string,
  options: KinesisFidelityProxyOptions = {},
): Promise<KinesisFidelityProxy> {
  const lifetime = options.iteratorLifetimeMs ?? SHARD_ITERATOR_LIFETIME_MS;
  if (!Number.isFinite(lifetime) || lifetime <= 0) {
    throw new RangeError(`iteratorLifetimeMs must be a positive number, got ${lifetime}`);
  }
  const kinesis = new KinesisAsAws(lifetime, options.now ?? Date.now);
  const running = await startAwsJsonProxy(upstream, AwsJsonContentType.V1_1, (call) => kinesis.answer(call));
  return {
    ...running,
    stats: kinesis.stats,
    expireIterators: () => kinesis.expireIterators(),
    failNext: (operation, count, error = KinesisRetryableError.Throughput) => {
      if (!Number.isInteger(count) || count < 0) {
        throw new RangeError(`count must be an integer >= 0, got ${count}`);
      }
      kinesis.failNext(operation, count, error);
    },
  };
}

/** What the proxy keeps between calls (the iterators it issued, the faults asked for) and how it answers. */
class KinesisAsAws {
  readonly stats = { issuedIterators: 0, expiredIteratorAnswers: 0, injected: {} as Record<string, number> };
  readonly #lifetime: number;
  readonly #now: () => number;
  readonly #iterators = new Map<string, IssuedIterator>();
  /** Iterators with a serial below this one were expired by `expireIterators()`. */
  #firstValidSerial = 0;
  readonly #pending = new Map<string, { count: number; error: KinesisRetryableError }>();

  constructor(lifetime: number, now: () => number) {
    this.#lifetime = lifetime;
    this.#now = now;
  }

  expireIterators(): void {
    this.#firstValidSerial = this.stats.issuedIterators;
  }

  failNext(operation: KinesisOperation, count: number, error: KinesisRetryableError): void {
    this.#pending.set(operation, { count, error });
  }

  async answer(call: ProxiedCall): Promise<void> {
    const operation = call.target.slice(call.target.indexOf(".") + 1);
    if (this.#injectedFault(call, operation)) return;
    if (operation === KinesisOperation.GetShardIterator)
      return this.#forwardIssuing(call, call.body, "ShardIterator");
    if (operation === KinesisOperation.GetRecords) return this.#getRecords(call);
    return call.pass();
  }

  /** Answers with the fault `failNext` asked for, if one is pending for `operation`. */
  #injectedFault(call: ProxiedCall, operation: string): boolean {
    const fault = this.#pending.get(operation);
    if (!fault || fault.count <= 0) return false;
    fault.count -= 1;
    this.stats.injected[operation] = (this.stats.injected[operation] ?? 0) + 1;
    call.answerJson(400, {
      __type: fault.error,
      message: `Rate exceeded for ${operation} (injected by the fidelity proxy)`,
    });
    return true;
  }

  /** GetRecords on one of the proxy's iterators: expired, or forwarded with the upstream's iterator. */
  async #getRecords(call: ProxiedCall): Promise<void> {
    const parsed = JSON.parse(call.body.toString("utf8")) as {
      ShardIterator?: string;
      [other: string]: unknown;
    };
    const issued = parsed.ShardIterator ? this.#iterators.get(parsed.ShardIterator) : undefined;
    // Not one of ours: let the upstream judge it.
    if (!issued) return call.pass();
    const at = this.#now();
    if (issued.serial < this.#firstValidSerial || at - issued.issuedAt > this.#lifetime) {
      this.stats.expiredIteratorAnswers += 1;
      call.answerJson(400, {
        __type: "ExpiredIteratorException",
        message: `Iterator expired. The iterator was created at time ${new Date(issued.issuedAt).toUTCString()} while right now it is ${new Date(at).toUTCString()} which is further in the future than the tolerated delay of ${this.#lifetime} milliseconds.`,
      });
      return;
    }
    const upstreamRequest = Buffer.from(JSON.stringify({ ...parsed, ShardIterator: issued.upstream }));
    return this.#forwardIssuing(call, upstreamRequest, "NextShardIterator");
  }

  /**
   * Forwards `body` and answers with the upstream's page, its iterator field (if any) replaced by one of
   * the proxy's own; an upstream error is answered as it came.
   */
  async #forwardIssuing(
    call: ProxiedCall,
    body: Uint8Array,
    field: "ShardIterator" | "NextShardIterator",
  ): Promise<void> {
    const upstreamResponse = await call.forward(body);
    const text = await upstreamResponse.text();
    if (!upstreamResponse.ok) return call.answer(upstreamResponse.status, text);
    const page = JSON.parse(text) as Record<string, unknown>;
    const iterator = page[field];
    call.answerJson(200, {
      ...page,
      ...(typeof iterator === "string" && iterator ? { [field]: this.#issue(iterator) } : {}),
    });
  }

  #issue(upstreamIterator: string): string {
    const token = randomBytes(96).toString("base64");
    this.#iterators.set(token, {
      upstream: upstreamIterator,
      issuedAt: this.#now(),
      serial: this.stats.issuedIterators,
    });
    this.stats.issuedIterators += 1;
    return token;
  }
}
