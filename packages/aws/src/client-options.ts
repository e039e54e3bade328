import { NodeHttpHandler } from "@smithy/node-http-handler";
import { type SdkRetryBases, sdkRetryStrategy } from "./sdk-retry.js";

/**
 * Options shared by every client. Leave `endpoint` unset in Lambda: the SDK then honours the
 * standard AWS_ENDPOINT_URL / AWS_ENDPOINT_URL_<SERVICE> variables, which is how the local runtime,
 * LocalStack or any emulator is reached without code changes.
 */
export interface ClientOptions {
  readonly region?: string;
  readonly endpoint?: string;
  readonly credentials?: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    /** Temporary credentials (an assumed role, SSO) come with a session token. */
    readonly sessionToken?: string;
  };
  /** SDK attempts per request, including the first. */
  readonly maxAttempts?: number;
  /**
   * The bases of the SDK's retry backoff (a function's SDK_RETRY_BASE_MS and SDK_THROTTLE_RETRY_BASE_MS):
   * standard mode otherwise unchanged (sdk-retry.ts). Unset, the SDK's own strategy.
   */
  readonly retryBases?: SdkRetryBases;
  /**
   * Socket timeouts. A request that hangs must fail well before the function times out, or a slow
   * downstream turns into a whole-batch timeout instead of one retried record.
   */
  readonly connectionTimeoutMs?: number;
  readonly requestTimeoutMs?: number;
}

export function commonClientConfig(options: ClientOptions) {
  const maxAttempts = options.maxAttempts ?? 3;
  return {
    ...(options.region !== undefined ? { region: options.region } : {}),
    ...(options.endpoint !== undefined ? { endpoint: options.endpoint } : {}),
    ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
    maxAttempts,
    ...(options.retryBases !== undefined
      ? { retryStrategy: sdkRetryStrategy(maxAttempts, options.retryBases) }
      : {}),
    requestHandler: new NodeHttpHandler({
      connectionTimeout: options.connectionTimeoutMs ?? 1_000,
      requestTimeout: options.requestTimeoutMs ?? 5_000,
    }),
  };
}
