// The local stack gives each function the environment terraform/modules/pipeline/function-environment.json
// declares (the one declaration main.tf reads too), with its own queues, and durations in ms on its time scale.
import { join } from "node:path";
import {
  functionEnvironment as declaredEnvironment,
  loadSettings,
  QUEUE_KEYS,
  resourceNames,
} from "@mcp-pipeline/settings";
import { describe, expect, it } from "vitest";
import {
  FUNCTION_NAMES,
  functionEnvironment,
  SETTINGS_KEY,
} from "../../src/pipeline/function-environment.js";
import { type QueueHandle, type QueueRole, queueRoles } from "../../src/pipeline/resources.js";

const ROOT = join(import.meta.dirname, "../../../..");

/** A handle per queue role whose URL names the role, so a function wired to the wrong DLQ shows. */
const queues = Object.fromEntries(
  QUEUE_KEYS.flatMap((key) => Object.values(queueRoles(key))).map((role) => [
    role,
    { url: `http://127.0.0.1:1/000000000000/${role}`, arn: `arn:aws:sqs:eu-west-1:000000000000:${role}` },
  ]),
) as Record<QueueRole, QueueHandle>;

describe("the local stack's function environments are the declaration's", () => {
  it.each(FUNCTION_NAMES)(
    "%s: the declared variables and values, each consumer with its own queue's DLQ",
    async (name) => {
      const settings = await loadSettings(ROOT, "dev");
      const names = resourceNames(settings.name_prefix);
      const local = functionEnvironment(name, { settings, names, queues, scale: (ms) => ms });
      const dlq = {
        processor: undefined,
        "tool-worker": "toolJobsDlq",
        "fifo-worker": "sessionJobsDlq",
        "dlq-redrive": "streamFailuresDlq",
      }[name];
      expect(local).toEqual(
        declaredEnvironment(SETTINGS_KEY[name], {
          settings,
          names,
          ...(dlq === undefined ? {} : { deadLetterQueueUrl: queues[dlq as QueueRole].url }),
        }),
      );
    },
  );

  it("durations in ms are divided by the time scale; nothing else is", async () => {
    const settings = await loadSettings(ROOT, "dev");
    const names = resourceNames(settings.name_prefix);
    const at = (scale: (ms: number) => number) =>
      functionEnvironment("tool-worker", { settings, names, queues, scale });
    const [real, fast] = [at((ms) => ms), at((ms) => ms / 10)];
    const changed = Object.keys(real).filter((k) => real[k] !== fast[k]);
    expect(changed.sort()).toEqual([
      "DEADLINE_MARGIN_MS",
      "RETRY_BACKOFF_BASE_MS",
      "RETRY_BACKOFF_MAX_MS",
      "SDK_RETRY_BASE_MS",
      "SDK_THROTTLE_RETRY_BASE_MS",
    ]);
    expect(fast.DEADLINE_MARGIN_MS).toBe(String(settings.tool_worker.deadline_margin_ms / 10));
    // The SDK's retry backoff is a duration like the others: 1 s after a throttling error is 100 ms at /10.
    expect(fast.SDK_THROTTLE_RETRY_BASE_MS).toBe(
      String(settings.tool_worker.sdk_throttle_retry_base_ms / 10),
    );
  });
});
