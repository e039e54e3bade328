import * as s from "./light-schema.js";
import {
  ID_MAX,
  SESSION_ID_MAX,
  SPEC_VERSION_MESSAGE,
  SPEC_VERSION_PATTERN,
  TOOL_NAME_MESSAGE,
  TOOL_NAME_PATTERN,
} from "./spec-version.js";

export { CURRENT_SPEC_VERSION, SPEC_MAJOR, SUPPORTED_SPEC_VERSIONS } from "./spec-version.js";

export const specVersionSchema = s.text({
  pattern: SPEC_VERSION_PATTERN,
  patternMessage: SPEC_VERSION_MESSAGE,
});

/** Kinesis limits a partition key to 256 characters; the session id is the partition key. */
export const sessionIdSchema = s.text({ min: 1, max: SESSION_ID_MAX });
export const callIdSchema = s.text({ min: 1, max: ID_MAX });
export const eventIdSchema = s.text({ min: 1, max: ID_MAX });
/** MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`. */
export const toolNameSchema = s.text({ pattern: TOOL_NAME_PATTERN, patternMessage: TOOL_NAME_MESSAGE });
/** UTC instants only (`...Z`), with milliseconds: one spelling per instant keeps comparisons and digests stable. */
export const instantSchema = s.instant();
