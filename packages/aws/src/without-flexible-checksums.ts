import type {
  HandlerExecutionContext,
  InitializeHandler,
  InitializeHandlerArguments,
  Pluggable,
} from "@smithy/types";

// What a function's bundle holds in place of the S3 client's flexible-checksums plugin: tools/bundler
// (bundle-function.ts) resolves @aws-sdk/checksums' getFlexibleChecksumsPlugin to this module. The plugin
// computes a CRC32 (or SHA, CRC64) of a request body into x-amz-checksum-* and validates the one a GetObject
// answers with; its code, the checksum algorithms and their streams, was about 13 KiB of every zip with an S3
// client (docs/benchmarks/cold-start.md). What the functions call does not need it: a PutObject of a result or
// of a quarantined record is a string body, which SigV4 signs (x-amz-content-sha256 is the SHA-256 of the
// body, and S3 refuses a body that does not match it), and they read nothing back in a function. So every S3
// client of @mcp-pipeline/aws computes and validates a flexible checksum only where the operation requires one
// (`requestChecksumCalculation`/`responseChecksumValidation: "WHEN_REQUIRED"`, s3-client.ts): with those
// settings the SDK's plugin leaves a PutObject or GetObject as it is, and this one does the same, and refuses
// what the SDK's would have computed or validated, so that nothing is sent unchecked that the tests saw
// checked (packages/aws/test/unit/without-flexible-checksums.test.ts). Tests and tools run the SDK's own plugin.

/** Why a request that wants a flexible checksum cannot be sent from a function: what the bundle left out. */
export const NO_FLEXIBLE_CHECKSUMS =
  "S3 flexible checksums (x-amz-checksum-*) are not bundled into a function: tools/bundler leaves out " +
  "the SDK's checksum middleware (packages/aws/src/without-flexible-checksums.ts), and @mcp-pipeline/aws's " +
  "S3 client computes and validates them only when an operation requires one";

/** What an S3 command tells the plugin about itself (the generated commandBuilder.js). */
export interface FlexibleChecksumsOperation {
  readonly requestChecksumRequired: boolean;
  readonly requestAlgorithmMember?: { readonly name: string; readonly httpHeader?: string };
  readonly requestValidationModeMember?: string;
}

/** The client's resolved settings the plugin reads (resolveFlexibleChecksumsConfig, which stays the SDK's). */
export interface FlexibleChecksumsSettings {
  readonly requestChecksumCalculation: () => Promise<string>;
  readonly responseChecksumValidation: () => Promise<string>;
}

/** Why the SDK's plugin would compute or validate a checksum for this request, or undefined when it would not. */
export async function checksumWanted(
  settings: FlexibleChecksumsSettings,
  operation: FlexibleChecksumsOperation,
  input: Readonly<Record<string, unknown>>,
): Promise<string | undefined> {
  const algorithm = operation.requestAlgorithmMember?.name;
  const validationMode = operation.requestValidationModeMember;
  if (operation.requestChecksumRequired) return "the operation requires a checksum";
  if (algorithm !== undefined && input[algorithm] !== undefined) return `the request names ${algorithm}`;
  if (algorithm !== undefined && (await settings.requestChecksumCalculation()) === "WHEN_SUPPORTED") {
    return "requestChecksumCalculation is WHEN_SUPPORTED";
  }
  if (validationMode !== undefined && input[validationMode] === "ENABLED")
    return `the request sets ${validationMode}`;
  if (validationMode !== undefined && (await settings.responseChecksumValidation()) === "WHEN_SUPPORTED") {
    return "responseChecksumValidation is WHEN_SUPPORTED";
  }
  return undefined;
}

/** Same name and call as @aws-sdk/checksums' `getFlexibleChecksumsPlugin`, which each S3 command calls. */
export const getFlexibleChecksumsPlugin = <Input extends object, Output extends object>(
  settings: FlexibleChecksumsSettings,
  operation: FlexibleChecksumsOperation,
): Pluggable<Input, Output> => ({
  applyToStack: (stack) => {
    stack.add(
      (next: InitializeHandler<Input, Output>, context: HandlerExecutionContext) =>
        async (args: InitializeHandlerArguments<Input>) => {
          const why = await checksumWanted(settings, operation, args.input as Record<string, unknown>);
          if (why !== undefined) {
            throw new Error(`${context.commandName ?? "this S3 request"}: ${why}; ${NO_FLEXIBLE_CHECKSUMS}`);
          }
          return next(args);
        },
      { step: "initialize", name: "withoutFlexibleChecksums", override: true },
    );
  },
});
