import * as s from "@mcp-pipeline/contracts/light-schema";
import { TEST_TOOLS_VALUES } from "@mcp-pipeline/settings/tuning";

const { true: TEST_TOOLS_ON, false: TEST_TOOLS_OFF } = TEST_TOOLS_VALUES;

/**
 * A base URL the tool can keep a job within: no credentials, query or fragment to combine paths with.
 * True of what is no URL at all, which the URL check refuses by itself (`refined` in light-schema).
 */
export function isPlainBaseUrl(url: string): boolean {
  const parsed = URL.parse(url.trim());
  return parsed === null || (parsed.username === "" && parsed.password === "" && !/[?#]/.test(url));
}
export const PLAIN_BASE_URL_MESSAGE =
  "must not hold credentials, a query or a fragment (the tool appends each job's path to it)";

/** The most a response body may hold by default, and at most: 1 MiB, 10 MiB. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1_048_576;
export const MAX_RESPONSE_BYTES_LIMIT = 10_485_760;

/**
 * Settings the tools read from the function's environment. Hand-written field rules, not zod, for the
 * workers' cold start (docs/benchmarks/cold-start.md); test/integration/tools.test.ts ("tools configuration") shows
 * what each bad value gets.
 */
export const toolsConfigSchema = s.object({
  /** Where `http.request` sends its calls. Without it, the tool is not offered. */
  HTTP_TOOL_BASE_URL: s.optional(s.refined(s.httpUrl(), isPlainBaseUrl, PLAIN_BASE_URL_MESSAGE)),
  HTTP_TOOL_TIMEOUT_MS: s.withDefault(s.integer({ coerce: true, min: 1, max: 900_000 }), 5_000),
  /** A response body longer than this fails the call (permanent, `http-response-too-large`). */
  HTTP_TOOL_MAX_RESPONSE_BYTES: s.withDefault(
    s.integer({ coerce: true, min: 1, max: MAX_RESPONSE_BYTES_LIMIT }),
    DEFAULT_MAX_RESPONSE_BYTES,
  ),
  /**
   * `on` offers the test tools (`load.latency`: a job chooses how long it waits and whether it fails).
   * Off unless an environment's settings say `test_tools: true`; lint:config refuses that in prod.
   */
  TEST_TOOLS: s.withDefault(
    s.text({
      pattern: new RegExp(`^(${TEST_TOOLS_ON}|${TEST_TOOLS_OFF})$`),
      patternMessage: `expected ${TEST_TOOLS_ON} or ${TEST_TOOLS_OFF}`,
    }),
    TEST_TOOLS_OFF,
  ),
});
export type ToolsConfig = s.Output<typeof toolsConfigSchema.shape>;
