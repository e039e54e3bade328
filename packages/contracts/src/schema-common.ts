import * as z from "zod";
import {
  ID_MAX,
  SESSION_ID_MAX,
  SPEC_VERSION_MESSAGE,
  SPEC_VERSION_PATTERN,
  TOOL_NAME_MESSAGE,
  TOOL_NAME_PATTERN,
} from "./spec-version.js";

export { CURRENT_SPEC_VERSION, SPEC_MAJOR, SUPPORTED_SPEC_VERSIONS } from "./spec-version.js";

export const specVersionSchema = z.string().regex(SPEC_VERSION_PATTERN, SPEC_VERSION_MESSAGE);

/** Kinesis limits a partition key to 256 characters; the session id is the partition key. */
export const sessionIdSchema = z.string().min(1).max(SESSION_ID_MAX);
export const callIdSchema = z.string().min(1).max(ID_MAX);
export const eventIdSchema = z.string().min(1).max(ID_MAX);
/** MCP tool names: 1-128 characters of letters, digits, `_`, `-` and `.`. */
export const toolNameSchema = z.string().regex(TOOL_NAME_PATTERN, TOOL_NAME_MESSAGE);
/** UTC instants only (`...Z`): one spelling per instant keeps comparisons and digests stable. */
export const instantSchema = z.iso.datetime({ precision: 3 });
