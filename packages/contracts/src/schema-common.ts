import { z } from "zod";

/**
 * Major version 1 is understood. A minor version (1.1, 1.2...) may add optional fields, which this
 * consumer ignores, so producers can roll forward before consumers. A new major is refused with
 * UnsupportedVersionError instead of being misread.
 */
export const SPEC_MAJOR = 1;
export const CURRENT_SPEC_VERSION = "1.0";
export const SUPPORTED_SPEC_VERSIONS = "1.x";

export const specVersionSchema = z.string().regex(/^1\.\d{1,4}$/, "expected 1.<minor>");

/** Kinesis limits a partition key to 256 characters; the session id is the partition key. */
export const sessionIdSchema = z.string().min(1).max(256);
export const callIdSchema = z.string().min(1).max(128);
export const eventIdSchema = z.string().min(1).max(128);
/** MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`. */
export const toolNameSchema = z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, "expected 1-128 of [A-Za-z0-9_.-]");
/** UTC instants only (`...Z`): one spelling per instant keeps comparisons and digests stable. */
export const instantSchema = z.iso.datetime({ precision: 3 });
