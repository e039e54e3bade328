import type { Context } from "aws-lambda";

/**
 * A Lambda context whose remaining time follows a real clock from `timeoutMs`, or a scripted
 * function for deadline tests.
 */
export function lambdaContext(
  options: { timeoutMs?: number; remainingMs?: () => number; functionName?: string } = {},
): Context {
  const started = Date.now();
  const timeoutMs = options.timeoutMs ?? 60_000;
  const remaining = options.remainingMs ?? (() => Math.max(0, timeoutMs - (Date.now() - started)));
  const functionName = options.functionName ?? "processor";
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: "$LATEST",
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: "512",
    awsRequestId: `req-${started}-${Math.random().toString(16).slice(2)}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: "test",
    getRemainingTimeInMillis: remaining,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
