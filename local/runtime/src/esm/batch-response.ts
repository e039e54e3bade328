/**
 * How an event source mapping with ReportBatchItemFailures reads a function's response
 * (docs/aws-semantics.md §1.4 for Kinesis, §2.3 for SQS, §9.1 item 6, §9.2 item 4).
 */
export type BatchResponseReading =
  | { readonly kind: "success" }
  | { readonly kind: "partial"; readonly failed: readonly string[] }
  | { readonly kind: "invalid"; readonly reason: string };

/**
 * - `""`, `null`, `{}`, `[]`, a response without `batchItemFailures`, and an empty or null list are
 *   complete success (§1.4 "Complete success", AWS-recorded).
 * - An item without `itemIdentifier`, with an empty or null one, or with one that is not in the batch
 *   fails the whole batch (§1.4 "Complete failure"; §2.3 for SQS). So does a list that is not a list
 *   (undocumented; chosen as the safe reading).
 */
export function readBatchResponse(payload: string, identifiers: ReadonlySet<string>): BatchResponseReading {
  let response: unknown;
  try {
    response = JSON.parse(payload);
  } catch {
    return { kind: "invalid", reason: "the response is not JSON" };
  }
  if (response === null || response === "" || Array.isArray(response) || typeof response !== "object") {
    return { kind: "success" };
  }
  const list = (response as { batchItemFailures?: unknown }).batchItemFailures;
  if (list === undefined || list === null) return { kind: "success" };
  if (!Array.isArray(list)) return { kind: "invalid", reason: "batchItemFailures is not a list" };
  const failed: string[] = [];
  for (const item of list) {
    const id = (item as { itemIdentifier?: unknown } | null)?.itemIdentifier;
    if (id === undefined) return { kind: "invalid", reason: "an item has no itemIdentifier" };
    if (id === null || id === "") return { kind: "invalid", reason: "an itemIdentifier is empty or null" };
    if (typeof id !== "string" || !identifiers.has(id)) {
      return { kind: "invalid", reason: `itemIdentifier ${JSON.stringify(id)} is not in the batch` };
    }
    failed.push(id);
  }
  return failed.length === 0 ? { kind: "success" } : { kind: "partial", failed };
}
