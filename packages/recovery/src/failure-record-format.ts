/**
 * The failure record's field formats, shared by the zod schema and the hand-written decoder that
 * dlq-redrive runs: this file imports nothing, so the decoder's bundle does not load zod at import
 * (issue 15: zod alone was 94 KiB of dlq-redrive's code at import).
 */

/**
 * A Kinesis shard id as the API takes it: 1-128 characters of [a-zA-Z0-9_.-] (docs/aws-semantics.md §1.6).
 * Anything else could only fail the re-read, again on every retry, instead of going to the DLQ at once.
 */
export const SHARD_ID = /^[a-zA-Z0-9_.-]{1,128}$/;
export const SHARD_ID_MESSAGE = "expected a shard id (1-128 characters of a-z, A-Z, 0-9, _ . -)";
/** The record's format: "1.0" is all AWS sends (§1.6); another major version is kept for a person. */
export const FAILURE_RECORD_VERSION = /^1\.\d+$/;
export const FAILURE_RECORD_VERSION_MESSAGE = "unsupported version: this consumer reads 1.x";
