/**
 * The quarantine's rare path, loaded by core.ts (processorDeps) on the first bad record: the S3 client and the
 * writer. Bundled with code splitting, this module and what only it needs (the S3 client above all) are
 * chunks of the zip that an import of index.mjs neither parses nor evaluates (docs/benchmarks/cold-start.md).
 * It exports only what processorDeps calls: a dynamically imported module keeps every export it has.
 */
export { s3Client } from "@mcp-pipeline/aws/s3-client";
export { kinesisDataOf, kinesisSourceOf, writeQuarantineRecord } from "@mcp-pipeline/recovery/quarantine";
