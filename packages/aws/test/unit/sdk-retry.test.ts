import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Readable } from "node:stream";
import { DynamoDBClient, GetItemCommand } from "@aws-sdk/client-dynamodb";
import { PutRecordCommand } from "@aws-sdk/client-kinesis";
import { GetCommand } from "@aws-sdk/lib-dynamodb";
import { HttpResponse } from "@smithy/core/protocols";
import { MAXIMUM_RETRY_DELAY, Retry } from "@smithy/core/retry";
import { afterEach, describe, expect, it, vi } from "vitest";
import { type ClientOptions, commonClientConfig } from "../../src/client-options.js";
import { dynamoDbDocumentClient } from "../../src/clients.js";
import { kinesisClient } from "../../src/kinesis-client.js";
import {
  DYNAMODB_RETRY_DELAY_BASE,
  dynamoDbRetryBases,
  SDK_RETRY_BASES,
  SDK_RETRY_CAP_MS,
  sdkRetryBases,
  sdkRetryStrategy,
} from "../../src/sdk-retry.js";

// The SDK's retry backoff as a declared setting (src/sdk-retry.ts): on a real DynamoDB client whose HTTP
// handler answers every request with the same error (no socket), how long the SDK waited between the tries
// (its own $metadata.totalRetryDelay) with the jitter's draw fixed at one half.

const options: ClientOptions = {
  region: "eu-west-1",
  endpoint: "http://127.0.0.1:1",
  credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" },
};

const THROTTLED = { status: 400, type: "ProvisionedThroughputExceededException" } as const;
const SERVER_ERROR = { status: 500, type: "InternalServerError" } as const;
const INVALID = { status: 400, type: "ValidationException" } as const;

type ClientUnderTest = { readonly config: object; destroy(): void };

/**
 * A request that fails with `error` on every try, on `client` (through `send`): the tries made and the SDK's
 * total wait between them.
 */
async function failingRequest<C extends ClientUnderTest>(
  client: C,
  send: (client: C) => Promise<unknown>,
  error: { readonly status: number; readonly type: string },
): Promise<{ attempts: number | undefined; totalRetryDelay: number | undefined; tries: number }> {
  let tries = 0;
  (client.config as { requestHandler: unknown }).requestHandler = {
    handle: async () => {
      tries += 1;
      return {
        response: new HttpResponse({
          statusCode: error.status,
          headers: { "content-type": "application/x-amz-json-1.0", "x-amzn-errortype": error.type },
          body: Readable.from([
            JSON.stringify({ __type: `com.amazonaws#${error.type}`, message: "refused" }),
          ]),
        }),
      };
    },
  };
  const failure: unknown = await send(client).then(
    () => undefined,
    (e: unknown) => e,
  );
  client.destroy();
  expect(failure).toBeInstanceOf(Error);
  const metadata = (failure as { $metadata?: { attempts?: number; totalRetryDelay?: number } }).$metadata;
  return { attempts: metadata?.attempts, totalRetryDelay: metadata?.totalRetryDelay, tries };
}

/** A GetItem on a bare DynamoDB client with commonClientConfig, failing with `error` on every try. */
const failingGetItem = (
  clientOptions: ClientOptions,
  error: { readonly status: number; readonly type: string },
) =>
  failingRequest(
    new DynamoDBClient(commonClientConfig(clientOptions)),
    (client) => client.send(new GetItemCommand({ TableName: "t", Key: { pk: { S: "k" } } })),
    error,
  );

/** The same through each of the package's client factories. */
const FACTORIES = {
  dynamoDbDocumentClient: (
    clientOptions: ClientOptions,
    error: { readonly status: number; readonly type: string },
  ) =>
    failingRequest(
      dynamoDbDocumentClient(clientOptions),
      (client) => client.send(new GetCommand({ TableName: "t", Key: { pk: "k" } })),
      error,
    ),
  kinesisClient: (clientOptions: ClientOptions, error: { readonly status: number; readonly type: string }) =>
    failingRequest(
      kinesisClient(clientOptions),
      (client) =>
        client.send(new PutRecordCommand({ StreamName: "s", PartitionKey: "k", Data: new Uint8Array(1) })),
      error,
    ),
} as const;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("the SDK's retry backoff as declared settings", () => {
  it("waits the configured throttling base x 2^n x the jitter's draw after throttling errors", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const result = await failingGetItem(
      { ...options, retryBases: { baseMs: 7, throttlingBaseMs: 30 } },
      THROTTLED,
    );
    // 3 tries; before the 2nd 0.5 x 30 ms, before the 3rd 0.5 x 60 ms.
    expect(result).toEqual({ attempts: 3, totalRetryDelay: 15 + 30, tries: 3 });
  });

  it("waits the configured base x 2^n x the jitter's draw after transient errors", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const result = await failingGetItem(
      { ...options, retryBases: { baseMs: 8, throttlingBaseMs: 30 }, maxAttempts: 4 },
      SERVER_ERROR,
    );
    expect(result).toEqual({ attempts: 4, totalRetryDelay: 4 + 8 + 16, tries: 4 });
  });

  it("still does not retry an error standard mode does not retry", async () => {
    const result = await failingGetItem(
      { ...options, retryBases: { baseMs: 7, throttlingBaseMs: 30 } },
      INVALID,
    );
    expect(result).toEqual({ attempts: 1, totalRetryDelay: 0, tries: 1 });
  });

  it("keeps standard mode's cap and full jitter", async () => {
    const strategy = sdkRetryStrategy(20, { baseMs: 1, throttlingBaseMs: 10_000 }, () => 0.999);
    const token = await strategy.acquireInitialRetryToken("dynamodb");
    // The wait itself is a timer: fake it, and read the strategy's own record of it.
    vi.useFakeTimers();
    try {
      const refreshed = strategy.refreshRetryTokenForRetry(token, { errorType: "THROTTLING" });
      await vi.runAllTimersAsync();
      const first = await refreshed;
      expect(first.$retryLog?.acquisitionDelay).toBe(Math.floor(0.999 * 10_000));
      const next = strategy.refreshRetryTokenForRetry(first, { errorType: "THROTTLING" });
      await vi.runAllTimersAsync();
      // 10 s x 2 would be 20 s: the cap.
      expect((await next).$retryLog?.acquisitionDelay).toBe(Math.floor(0.999 * SDK_RETRY_CAP_MS));
    } finally {
      vi.useRealTimers();
    }
    expect(SDK_RETRY_CAP_MS).toBe(MAXIMUM_RETRY_DELAY);
  });

  for (const [factory, failing] of Object.entries(FACTORIES)) {
    it(`waits as the SDK's own strategy with the default settings (${factory})`, async () => {
      // A small draw keeps the real waits short (20 and 40 ms after throttling errors) and still tells a
      // 25 ms base from a 50 ms one (0 then 1 ms, or 1 then 2).
      vi.spyOn(Math, "random").mockReturnValue(0.02);
      for (const error of [THROTTLED, SERVER_ERROR]) {
        const sdk = await failing(options, error);
        const declared = await failing({ ...options, retryBases: SDK_RETRY_BASES }, error);
        expect(declared, error.type).toEqual(sdk);
        expect(declared.attempts, error.type).toBe(3);
      }
    });
  }

  it("gives a DynamoDB client its base in DynamoDB's proportion to the others'", async () => {
    vi.spyOn(Math, "random").mockReturnValue(0.5);
    const result = await FACTORIES.dynamoDbDocumentClient(
      { ...options, retryBases: { baseMs: 10, throttlingBaseMs: 100 } },
      SERVER_ERROR,
    );
    // 10 x 25 / 50 = 5 ms: 0.5 x 5 (floored), then 0.5 x 10.
    expect(result.totalRetryDelay).toBe(2 + 5);
    expect(dynamoDbRetryBases({ baseMs: 1, throttlingBaseMs: 1 })).toEqual({
      baseMs: 1,
      throttlingBaseMs: 1,
    });
    expect(dynamoDbRetryBases(SDK_RETRY_BASES).baseMs).toBe(DYNAMODB_RETRY_DELAY_BASE);
  });

  it("has the SDK's own bases as its defaults, in every function's declaration", () => {
    expect(SDK_RETRY_BASES).toEqual({ baseMs: Retry.delay(), throttlingBaseMs: Retry.throttlingDelay() });
    const declaration = JSON.parse(
      readFileSync(
        join(import.meta.dirname, "../../../../terraform/modules/pipeline/function-environment.json"),
        "utf8",
      ),
    ) as { functions: Record<string, { tuning: Record<string, { variable: string; default: number }> }> };
    for (const [fn, { tuning }] of Object.entries(declaration.functions)) {
      expect(
        sdkRetryBases({
          SDK_RETRY_BASE_MS: tuning.sdk_retry_base_ms?.default ?? Number.NaN,
          SDK_THROTTLE_RETRY_BASE_MS: tuning.sdk_throttle_retry_base_ms?.default ?? Number.NaN,
        }),
        fn,
      ).toEqual(SDK_RETRY_BASES);
      expect(tuning.sdk_retry_base_ms?.variable, fn).toBe("SDK_RETRY_BASE_MS");
      expect(tuning.sdk_throttle_retry_base_ms?.variable, fn).toBe("SDK_THROTTLE_RETRY_BASE_MS");
    }
  });

  it("refuses a base that is not a whole number of ms >= 1", () => {
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => sdkRetryStrategy(3, { baseMs: bad, throttlingBaseMs: 10 })).toThrow(RangeError);
      expect(() => sdkRetryStrategy(3, { baseMs: 10, throttlingBaseMs: bad })).toThrow(RangeError);
    }
  });
});
