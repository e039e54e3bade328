import { randomBytes } from "node:crypto";
import {
  AwsJsonContentType,
  type ProxiedCall,
  type RunningEmulator,
  startAwsJsonProxy,
} from "@mcp-pipeline/emulators";

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
  const now = options.now ?? Date.now;
  const iterators = new Map<string, IssuedIterator>();
  /** Iterators with a serial below this one were expired by `expireIterators()`. */
  let firstValidSerial = 0;
  const pending = new Map<string, { count: number; error: KinesisRetryableError }>();
  const stats = { issuedIterators: 0, expiredIteratorAnswers: 0, injected: {} as Record<string, number> };

  const issue = (upstreamIterator: string): string => {
    const token = randomBytes(96).toString("base64");
    iterators.set(token, { upstream: upstreamIterator, issuedAt: now(), serial: stats.issuedIterators });
    stats.issuedIterators += 1;
    return token;
  };

  /**
   * Forwards `body` and answers with the upstream's page, its iterator field (if any) replaced by one of
   * the proxy's own; an upstream error is answered as it came.
   */
  const forwardIssuing = async (
    call: ProxiedCall,
    body: Uint8Array,
    field: "ShardIterator" | "NextShardIterator",
  ) => {
    const upstreamResponse = await call.forward(body);
    const text = await upstreamResponse.text();
    if (!upstreamResponse.ok) return call.answer(upstreamResponse.status, text);
    const page = JSON.parse(text) as Record<string, unknown>;
    const iterator = page[field];
    call.answerJson(200, {
      ...page,
      ...(typeof iterator === "string" && iterator ? { [field]: issue(iterator) } : {}),
    });
  };

  const running = await startAwsJsonProxy(upstream, AwsJsonContentType.V1_1, async (call) => {
    const operation = call.target.slice(call.target.indexOf(".") + 1);

    const fault = pending.get(operation);
    if (fault && fault.count > 0) {
      fault.count -= 1;
      stats.injected[operation] = (stats.injected[operation] ?? 0) + 1;
      call.answerJson(400, {
        __type: fault.error,
        message: `Rate exceeded for ${operation} (injected by the fidelity proxy)`,
      });
      return;
    }

    if (operation === KinesisOperation.GetShardIterator)
      return forwardIssuing(call, call.body, "ShardIterator");

    if (operation === KinesisOperation.GetRecords) {
      const parsed = JSON.parse(call.body.toString("utf8")) as {
        ShardIterator?: string;
        [other: string]: unknown;
      };
      const issued = parsed.ShardIterator ? iterators.get(parsed.ShardIterator) : undefined;
      // Not one of ours: let the upstream judge it.
      if (!issued) return call.pass();
      const at = now();
      if (issued.serial < firstValidSerial || at - issued.issuedAt > lifetime) {
        stats.expiredIteratorAnswers += 1;
        call.answerJson(400, {
          __type: "ExpiredIteratorException",
          message: `Iterator expired. The iterator was created at time ${new Date(issued.issuedAt).toUTCString()} while right now it is ${new Date(at).toUTCString()} which is further in the future than the tolerated delay of ${lifetime} milliseconds.`,
        });
        return;
      }
      const upstreamRequest = Buffer.from(JSON.stringify({ ...parsed, ShardIterator: issued.upstream }));
      return forwardIssuing(call, upstreamRequest, "NextShardIterator");
    }

    return call.pass();
  });

  return {
    ...running,
    stats,
    expireIterators: () => {
      firstValidSerial = stats.issuedIterators;
    },
    failNext: (operation, count, error = KinesisRetryableError.Throughput) => {
      if (!Number.isInteger(count) || count < 0) {
        throw new RangeError(`count must be an integer >= 0, got ${count}`);
      }
      pending.set(operation, { count, error });
    },
  };
}
