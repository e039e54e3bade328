import { PermanentError, TransientError } from "@mcp-pipeline/contracts";
import { defineTool, type RegisteredTool } from "@mcp-pipeline/tool-registry";

/** The downstream answered with an HTTP error status. 429 and 5xx are transient, other 4xx permanent. */
export class DownstreamStatusError extends Error {
  readonly status: number;
  constructor(status: number, url: string) {
    super(`${url} answered ${status}`);
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

function classify(status: number, url: string): Error {
  const cause = new DownstreamStatusError(status, url);
  if (status === 429) return new TransientError("downstream-throttled", cause.message, { cause });
  if (status >= 500) return new TransientError("downstream-5xx", cause.message, { cause });
  return new PermanentError("downstream-4xx", cause.message, { cause });
}

/**
 * An I/O tool: calls the configured HTTP endpoint. Only the path comes from the job, so a job cannot
 * point the worker at an arbitrary host. Network errors and timeouts are transient.
 */
export function httpRequest(baseUrl: string, timeoutMs: number): RegisteredTool {
  const base = new URL(baseUrl);
  return defineTool<HttpRequestArgs, HttpRequestResult>({
    name: "http.request",
    description: `Calls ${base.origin} with a path and returns the status and body.`,
    inputSchema: {
      type: "object",
      properties: {
        path: { type: "string", pattern: "^/[^\\s]*$", maxLength: 2048 },
        method: { enum: ["GET", "POST"] },
        body: { type: "object" },
      },
      required: ["path"],
      additionalProperties: false,
    },
    timeoutMs,
    concurrency: 16,
    run: async ({ path, method = "GET", body }, { signal, idempotencyKey }) => {
      const url = new URL(path.replace(/^\/+/, ""), base.href.endsWith("/") ? base.href : `${base.href}/`);
      let response: Response;
      try {
        response = await fetch(url, {
          method,
          signal,
          // The same key on every run of the job: a downstream that honours it applies the job once
          // however many times the worker runs it (docs/tool-workers.md "Idempotency keys").
          headers: {
            "idempotency-key": idempotencyKey,
            ...(body ? { "content-type": "application/json" } : {}),
          },
          ...(body && method === "POST" ? { body: JSON.stringify(body) } : {}),
        });
      } catch (error) {
        if (signal.aborted) throw signal.reason;
        throw new TransientError("downstream-unreachable", `${url.origin}: ${String(error)}`, {
          cause: error,
        });
      }
      const text = await response.text();
      if (!response.ok) throw classify(response.status, url.href);
      const contentType = response.headers.get("content-type");
      let parsed: unknown = text;
      if (contentType?.includes("json")) {
        try {
          parsed = JSON.parse(text);
        } catch (error) {
          throw new PermanentError("downstream-bad-json", `${url.href} sent invalid JSON`, { cause: error });
        }
      }
      return { status: response.status, contentType, body: parsed };
    },
  }) as RegisteredTool;
}
