/**
 * Major version 1 is understood. A minor version (1.1, 1.2...) may add optional fields, which this
 * consumer ignores, so producers can roll forward before consumers. A new major is refused with
 * UnsupportedVersionError instead of being misread.
 */
export const SPEC_MAJOR = 1;
export const CURRENT_SPEC_VERSION = "1.0";
export const SUPPORTED_SPEC_VERSIONS = "1.x";
export const SPEC_VERSION_PATTERN = /^1\.\d{1,4}$/;
export const SPEC_VERSION_MESSAGE = "expected 1.<minor>";

/** Kinesis limits a partition key to 256 characters; the session id is the partition key. */
export const SESSION_ID_MAX = 256;
export const ID_MAX = 128;
/** MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,128}$/;
export const TOOL_NAME_MESSAGE = "expected 1-128 of [A-Za-z0-9_.-]";
export const DIGEST_PATTERN = /^[0-9a-f]{64}$/;
export const DIGEST_MESSAGE = "expected 64 lowercase hex characters";
export const ARGUMENTS_MESSAGE = "expected a JSON object of arguments";
