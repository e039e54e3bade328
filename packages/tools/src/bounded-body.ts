import { PermanentError } from "@mcp-pipeline/contracts";

/** A response body longer than the tool's cap: the rest was not read. */
export class ResponseTooLargeError extends PermanentError {
  readonly maxBytes: number;

  constructor(maxBytes: number, announced?: number) {
    super(
      "http-response-too-large",
      announced === undefined
        ? `http.request: the response body passed HTTP_TOOL_MAX_RESPONSE_BYTES (${maxBytes}); the rest was not read`
        : `http.request: the response announced ${announced} bytes, over HTTP_TOOL_MAX_RESPONSE_BYTES (${maxBytes}); not read`,
    );
    this.name = "ResponseTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/**
 * A response's body as text, read only up to `maxBytes`: a downstream that answers with gigabytes (or
 * never stops) would otherwise fill the worker's memory, which ends the whole batch, not one call. A
 * `content-length` over the cap is refused before reading; without one, the stream is counted as it
 * arrives and cancelled at the cap. Either is a permanent failure: the same request gets the same body.
 */
export async function readBodyWithin(response: Response, maxBytes: number): Promise<string> {
  const announced = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(announced) && announced > maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw new ResponseTooLargeError(maxBytes, announced);
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > maxBytes) {
      await reader.cancel().catch(() => undefined);
      throw new ResponseTooLargeError(maxBytes);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, length).toString("utf8");
}
