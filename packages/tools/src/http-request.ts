import { PermanentError, TransientError, urlForLogs } from "@mcp-pipeline/contracts";
import { defineTool, type JsonSchema, type RegisteredTool } from "@mcp-pipeline/tools/registry";
import { readBodyWithin } from "./bounded-body.js";
import { DEFAULT_MAX_RESPONSE_BYTES } from "./config.js";
import { DownstreamRedirectError, downstreamBase, redirectTarget, resolveJobPath } from "./downstream-url.js";

/** The downstream answered with an HTTP error status. 429 and 5xx are transient, other 4xx permanent. */
export class DownstreamStatusError extends Error {
  readonly status: number;
  constructor(status: number, url: URL) {
    // Origin and path only: the query may carry a token, and this message is logged and stored.
    super(`${urlForLogs(url)} answered ${status}`);
    this.name = "DownstreamStatusError";
    this.status = status;
  }
}

export interface HttpRequestArgs {
  readonly path: string;
  readonly method?: "GET" | "POST";
  readonly body?: Record<string, unknown>;
}

export interface HttpRequestResult {
  readonly status: number;
  readonly contentType: string | null;
  readonly body: unknown;
}

export interface HttpRequestOptions {
  readonly baseUrl: string;
  readonly timeoutMs: number;
  /** The most a response body may hold (HTTP_TOOL_MAX_RESPONSE_BYTES). */
  readonly maxResponseBytes?: number;
}

/** Redirects followed at most, each re-checked against the base (as fetch's own limit is 20). */
export const MAX_REDIRECTS = 5;

function classify(status: number, url: URL): Error {
  const cause = new DownstreamStatusError(status, url);
  if (status === 429) return new TransientError("downstream-throttled", cause.message, { cause });
  if (status >= 500) return new TransientError("downstream-5xx", cause.message, { cause });
  return new PermanentError("downstream-4xx", cause.message, { cause });
}

/** What the next request of a redirect chain sends: 303, and 301/302 after a POST, turn into a GET (fetch's rule). */
function afterRedirect(status: number, method: string): "keep" | "get" {
  return status === 303 || ((status === 301 || status === 302) && method === "POST") ? "get" : "keep";
}

/**
 * An I/O tool: calls the configured HTTP endpoint. Only the path comes from the job, and it cannot take
 * the request off the base URL (downstream-url.ts): a path that would is refused before anything is sent,
 * and a redirect is followed only within the base. The response body is read up to a cap. Network errors
 * and timeouts are transient; a refused path, redirect or body is permanent.
 */
/**
 * The job's body as JSON text. A body no JSON text can hold (nested past the engine's stack) fails the job
 * for good: every run would fail alike, and a transient error would only send it round to the DLQ unnamed.
 */
function serialised(body: Record<string, unknown>): string {
  try {
    return JSON.stringify(body);
  } catch (error) {
    throw new PermanentError("http-body-unserializable", "the job's body cannot be written as JSON", {
      cause: error,
    });
  }
}

/** What a job may ask: the registry holds its arguments to this before the tool runs. */
const INPUT_SCHEMA: JsonSchema = {
  type: "object",
  properties: {
    path: { type: "string", pattern: "^/[^\\s]*$", maxLength: 2048 },
    method: { enum: ["GET", "POST"] },
    body: { type: "object" },
  },
  required: ["path"],
  additionalProperties: false,
};

/** A request that got no answer: the run's own abort as it is, anything else worth a retry. */
function unsent(error: unknown, signal: AbortSignal, url: URL): unknown {
  if (signal.aborted) return signal.reason;
  return new TransientError("downstream-unreachable", `${urlForLogs(url)}: ${String(error)}`, {
    cause: error,
  });
}

/** A 2xx answer: its body read up to the cap, parsed when it says it is JSON. */
async function resultOf(response: Response, url: URL, maxBytes: number): Promise<HttpRequestResult> {
  const text = await readBodyWithin(response, maxBytes);
  const contentType = response.headers.get("content-type");
  let parsed: unknown = text;
  if (contentType?.includes("json")) {
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new PermanentError("downstream-bad-json", `${urlForLogs(url)} sent invalid JSON`);
    }
  }
  return { status: response.status, contentType, body: parsed };
}

export function httpRequest(options: HttpRequestOptions): RegisteredTool {
  const base = downstreamBase(options.baseUrl);
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  return defineTool<HttpRequestArgs, HttpRequestResult>({
    name: "http.request",
    description: `Calls ${base.origin} with a path and returns the status and body.`,
    inputSchema: INPUT_SCHEMA,
    timeoutMs: options.timeoutMs,
    concurrency: 16,
    run: async ({ path, method = "GET", body }, { signal, idempotencyKey }) => {
      let url = resolveJobPath(base, path);
      let sending: { method: string; body?: string } = {
        method,
        ...(body && method === "POST" ? { body: serialised(body) } : {}),
      };
      for (let redirects = 0; ; redirects += 1) {
        let response: Response;
        try {
          response = await fetch(url, {
            method: sending.method,
            signal,
            // Followed here, each target checked against the base: fetch's own "follow" checks nothing.
            redirect: "manual",
            // The same key on every run of the job: a downstream that honours it applies the job once
            // however many times the worker runs it (docs/tool-workers.md "Idempotency keys").
            headers: {
              "idempotency-key": idempotencyKey,
              ...(sending.body !== undefined ? { "content-type": "application/json" } : {}),
            },
            ...(sending.body !== undefined ? { body: sending.body } : {}),
          });
        } catch (error) {
          throw unsent(error, signal, url);
        }
        if (response.status >= 300 && response.status < 400 && response.headers.has("location")) {
          await response.body?.cancel().catch(() => undefined);
          if (redirects === MAX_REDIRECTS)
            throw new DownstreamRedirectError(response.status, `after ${MAX_REDIRECTS} others`);
          url = redirectTarget(base, url, response.status, response.headers.get("location"));
          if (afterRedirect(response.status, sending.method) === "get") sending = { method: "GET" };
          continue;
        }
        if (!response.ok) {
          // Its body is not read: the status decides, and an error page can be as large as it likes.
          await response.body?.cancel().catch(() => undefined);
          throw classify(response.status, url);
        }
        return await resultOf(response, url, maxBytes);
      }
    },
  }) as RegisteredTool;
}
