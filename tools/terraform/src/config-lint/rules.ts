/**
 * Configuration rules: settings that lose data or stall a pipeline, found before `terraform apply`.
 * Pure functions of an environment's settings (and, for alarms, of the pipeline's wiring).
 */
import { MARGIN_SHARE } from "@mcp-pipeline/batch";
import type { EnvironmentSettings } from "@mcp-pipeline/settings";

export interface Finding {
  readonly rule: RuleId;
  /** Dotted path of the setting in terraform.tfvars.json. */
  readonly setting: string;
  readonly message: string;
}

export const RuleId = {
  BisectOff: "bisect-off",
  InfiniteRetries: "infinite-retries",
  InfiniteRecordAge: "infinite-record-age",
  NoOnFailureDestination: "no-on-failure-destination",
  ReportBatchItemFailuresOff: "report-batch-item-failures-off",
  VisibilityTimeoutTooShort: "visibility-timeout-too-short",
  BatchExceedsTimeout: "batch-exceeds-timeout",
  MaxConcurrencyAboveReserved: "max-concurrency-above-reserved",
  FifoBatchSize: "fifo-batch-size",
  DlqRetentionNotLonger: "dlq-retention-not-longer",
  RecordAgeBeyondRetention: "record-age-beyond-retention",
  MissingAlarms: "missing-alarms",
  DeadlineMarginNotBelowTimeout: "deadline-margin-not-below-timeout",
  SlowDownstreamExhaustsRetries: "slow-downstream-exhausts-retries",
  TestToolsInProd: "test-tools-in-prod",
  DlqAlarmAfterStreamTrim: "dlq-alarm-after-stream-trim",
  BreakGlassIsAWorkflowRole: "break-glass-is-a-workflow-role",
} as const;
export type RuleId = (typeof RuleId)[keyof typeof RuleId];

/**
 * How much slower than `expected_record_latency_ms` the processor's downstream may get before deadline
 * partial responses alone use up its retries (docs/batch-engine.md "A slow downstream and the retry
 * quota"): a slowdown this large is a brownout the pipeline should ride out, not a failure.
 */
export const TOLERATED_SLOWDOWN = 10;

const SQS_FUNCTIONS = ["tool_worker", "fifo_worker", "dlq_redrive"] as const;
const FUNCTIONS = ["processor", ...SQS_FUNCTIONS] as const;
export type FunctionKey = (typeof FUNCTIONS)[number];

/** The roles terraform/bootstrap creates for workflows, of any environment. */
const WORKFLOW_ROLE = /^mcp-[a-z0-9]+-(deploy|plan)$/;

/** A production environment's name: `prod`, or `prod-` and a suffix (`prod-eu`). */
export const PRODUCTION_ENVIRONMENT = /^prod(-|$)/;

/** Every rule that reads settings alone (missing-alarms reads the Terraform wiring: see wiringFindings). */
export function settingsFindings(s: EnvironmentSettings): Finding[] {
  const slowDownstream = slowDownstreamFinding(s);
  return [
    ...processorEsmFindings(s),
    ...(slowDownstream
      ? [finding(RuleId.SlowDownstreamExhaustsRetries, slowDownstream.setting, slowDownstream.message)]
      : []),
    ...SQS_FUNCTIONS.flatMap((name) => sqsFunctionFindings(s, name)),
    ...dlqAlarmAfterStreamTrimFindings(s),
    ...testToolsFindings(s),
    ...breakGlassFindings(s),
    ...fifoBatchSizeFindings(s),
    ...FUNCTIONS.flatMap((name) => timeoutFindings(s, name)),
  ];
}

function finding(rule: RuleId, setting: string, message: string): Finding {
  return { rule, setting, message };
}

/** The processor's Kinesis mapping: the guards of docs/aws-semantics.md §1 that keep a shard moving and a record traced. */
function processorEsmFindings(s: EnvironmentSettings): Finding[] {
  const out: Finding[] = [];
  const esm = s.processor.esm;
  if (!esm.bisect_batch_on_function_error) {
    out.push(
      finding(
        RuleId.BisectOff,
        "processor.esm.bisect_batch_on_function_error",
        "bisect is off: one poison record fails its whole batch until retries run out, taking good records with it (docs/aws-semantics.md §1.3)",
      ),
    );
  }
  if (esm.maximum_retry_attempts === -1) {
    out.push(
      finding(
        RuleId.InfiniteRetries,
        "processor.esm.maximum_retry_attempts",
        "infinite retries: a record that always fails blocks its shard until the stream's retention drops it (§1.3)",
      ),
    );
  }
  if (esm.maximum_record_age_in_seconds === -1) {
    out.push(
      finding(
        RuleId.InfiniteRecordAge,
        "processor.esm.maximum_record_age_in_seconds",
        "infinite record age: only retention bounds how long a shard waits on a failing record (§1.3)",
      ),
    );
  }
  if (!esm.on_failure_destination) {
    out.push(
      finding(
        RuleId.NoOnFailureDestination,
        "processor.esm.on_failure_destination",
        "no on-failure destination: records discarded after retries or record age are dropped without a trace (§1.6)",
      ),
    );
  }
  if (!esm.report_batch_item_failures) {
    out.push(
      finding(
        RuleId.ReportBatchItemFailuresOff,
        "processor.esm.report_batch_item_failures",
        "ReportBatchItemFailures is off: the processor's partial responses are ignored and a failure retries the whole batch (§1.4)",
      ),
    );
  }
  if (esm.maximum_record_age_in_seconds > s.stream.retention_period_hours * 3600) {
    out.push(
      finding(
        RuleId.RecordAgeBeyondRetention,
        "processor.esm.maximum_record_age_in_seconds",
        `record age ${esm.maximum_record_age_in_seconds} s exceeds the stream's retention (${s.stream.retention_period_hours} h): records expire from the stream before the age limit can send them to the failure queue`,
      ),
    );
  }
  return out;
}

/** An SQS-fed function: partial batch responses, visibility timeout, maximum concurrency, DLQ retention (§2, §3). */
function sqsFunctionFindings(s: EnvironmentSettings, name: (typeof SQS_FUNCTIONS)[number]): Finding[] {
  const out: Finding[] = [];
  const fn = s[name];
  if (!fn.esm.report_batch_item_failures) {
    out.push(
      finding(
        RuleId.ReportBatchItemFailuresOff,
        `${name}.esm.report_batch_item_failures`,
        "ReportBatchItemFailures is off: one failed message returns its whole batch to the queue (§2.3)",
      ),
    );
  }
  const window = name === "fifo_worker" ? 0 : fn.esm.maximum_batching_window_in_seconds;
  const needed = 6 * fn.timeout_seconds + window;
  const visibility = fn.queue.visibility_timeout_seconds;
  if (visibility < fn.timeout_seconds) {
    out.push(
      finding(
        RuleId.VisibilityTimeoutTooShort,
        `${name}.queue.visibility_timeout_seconds`,
        `visibility timeout ${visibility} s is below the function's timeout ${fn.timeout_seconds} s: Lambda refuses to create the mapping (§2.1); the pipeline needs at least 6 x timeout + window = ${needed} s`,
      ),
    );
  } else if (visibility < needed) {
    out.push(
      finding(
        RuleId.VisibilityTimeoutTooShort,
        `${name}.queue.visibility_timeout_seconds`,
        `visibility timeout ${visibility} s is below 6 x timeout + window = ${needed} s: throttled or slow batches reappear while in flight and use up receives (§2.1)`,
      ),
    );
  }
  const reserved = fn.reserved_concurrency;
  const maximum = fn.esm.maximum_concurrency;
  // An unbounded mapping (null) scales up to AWS's own ceiling, about 1,000 concurrent batches (§2.2):
  // past any reservation, as a maximum above it does.
  if (reserved !== null && (maximum === null || maximum > reserved)) {
    out.push(
      finding(
        RuleId.MaxConcurrencyAboveReserved,
        `${name}.esm.maximum_concurrency`,
        `${maximum === null ? "no maximum concurrency (null: the mapping scales up to about 1000 concurrent batches)" : `maximum concurrency ${maximum}`} exceeds reserved concurrency ${reserved}: the mapping reads messages it cannot invoke, throttles use up receives (§2.2); set it to at most ${reserved}`,
      ),
    );
  }
  if (fn.queue.dlq_message_retention_seconds <= fn.queue.message_retention_seconds) {
    out.push(
      finding(
        RuleId.DlqRetentionNotLonger,
        `${name}.queue.dlq_message_retention_seconds`,
        `the DLQ keeps messages ${fn.queue.dlq_message_retention_seconds} s, not longer than its source (${fn.queue.message_retention_seconds} s): a standard DLQ keeps the original enqueue time, so messages can expire on arrival (§3, SQS DLQ retention)`,
      ),
    );
  }
  return out;
}

/**
 * A failure record names a range of the stream, not its records: once the stream trims them, redriving
 * the record re-reads nothing (docs/operations.md, "A failure record redriven late"). The record reaches
 * the failure queue at most maximum_record_age after the records arrived, and a standard DLQ keeps its
 * enqueue time (§4), so the DLQ's age alarm must page before the stream's retention runs out.
 */
function dlqAlarmAfterStreamTrimFindings(s: EnvironmentSettings): Finding[] {
  const failureAge = s.processor.esm.maximum_record_age_in_seconds;
  const retentionSeconds = s.stream.retention_period_hours * 3600;
  // A record age beyond the retention is record-age-beyond-retention's.
  if (
    failureAge !== -1 &&
    failureAge <= retentionSeconds &&
    failureAge + s.alarms.dlq_oldest_message_age_seconds >= retentionSeconds
  )
    return [
      finding(
        RuleId.DlqAlarmAfterStreamTrim,
        "alarms.dlq_oldest_message_age_seconds",
        `record age ${failureAge} s + DLQ age alarm ${s.alarms.dlq_oldest_message_age_seconds} s reach the stream's retention (${retentionSeconds} s): a failure record in the failure queue's DLQ pages on-call only when the records it names are trimmed, and redriving it then re-reads nothing`,
      ),
    ];
  return [];
}

function testToolsFindings(s: EnvironmentSettings): Finding[] {
  if (s.test_tools && PRODUCTION_ENVIRONMENT.test(s.environment))
    return [
      finding(
        RuleId.TestToolsInProd,
        "test_tools",
        `test tools in ${s.environment}: load.latency lets any job hold a worker for a minute or fail on demand; they are for dev and the local runtime (docs/tool-workers.md)`,
      ),
    ];
  return [];
}

/**
 * The break-glass role is exempt from the quarantine's protection (deletion, lifecycle, versioning, its
 * policy). Naming a role that workflows assume (terraform/bootstrap: mcp-<env>-deploy, mcp-<env>-plan,
 * this environment's or another's) would hand that protection to any merged change, or to dev.
 */
function breakGlassFindings(s: EnvironmentSettings): Finding[] {
  const breakGlass = s.quarantine.break_glass_role_name;
  if (breakGlass !== null && breakGlass !== undefined && WORKFLOW_ROLE.test(breakGlass))
    return [
      finding(
        RuleId.BreakGlassIsAWorkflowRole,
        "quarantine.break_glass_role_name",
        `${breakGlass} is a role GitHub workflows assume (terraform/bootstrap): the break-glass role must be one only a person assumes, with MFA (docs/security.md "Breaking the glass")`,
      ),
    ];
  return [];
}

function fifoBatchSizeFindings(s: EnvironmentSettings): Finding[] {
  if (s.fifo_worker.esm.batch_size > 10)
    return [
      finding(
        RuleId.FifoBatchSize,
        "fifo_worker.esm.batch_size",
        `batch size ${s.fifo_worker.esm.batch_size}: FIFO queues allow at most 10 (§3)`,
      ),
    ];
  return [];
}

/** A function's deadline margin and its full batch at the expected latency, against its timeout. */
function timeoutFindings(s: EnvironmentSettings, name: FunctionKey): Finding[] {
  const out: Finding[] = [];
  const fn = s[name];
  const margin = fn.deadline_margin_ms;
  if (margin >= fn.timeout_seconds * 1000) {
    out.push(
      finding(
        RuleId.DeadlineMarginNotBelowTimeout,
        `${name}.deadline_margin_ms`,
        `a deadline margin of ${margin} ms is not below the ${fn.timeout_seconds} s timeout: the function stops before it starts anything, and every record is retried until it is discarded`,
      ),
    );
  }
  const worst = fn.esm.batch_size * fn.expected_record_latency_ms;
  if (worst > fn.timeout_seconds * 1000) {
    out.push(
      finding(
        RuleId.BatchExceedsTimeout,
        `${name}.esm.batch_size`,
        `batch size ${fn.esm.batch_size} x expected ${fn.expected_record_latency_ms} ms per record = ${worst} ms, over the ${fn.timeout_seconds} s timeout: a full batch times out by design`,
      ),
    );
  }
  return out;
}

/**
 * Whether deadline partial responses alone use up the processor's retries when its downstream is
 * TOLERATED_SLOWDOWN times slower than expected (docs/batch-engine.md "A slow downstream and the retry
 * quota"), per configuration: the setting to change and why, or undefined when it does not happen.
 */
function slowDownstreamFinding(s: EnvironmentSettings): { setting: string; message: string } | undefined {
  const esm = s.processor.esm;
  if (esm.maximum_retry_attempts === -1) return undefined;
  // The schema fills in the function's default margin (@mcp-pipeline/settings' tuning.ts).
  const recordMs = TOLERATED_SLOWDOWN * s.processor.expected_record_latency_ms;
  if (esm.bisect_batch_on_function_error) {
    // A deadline answer splits the batch at the first unstarted record (§1.4 "Bisect on"). Whether that
    // split uses a retry is undocumented; AWS's wording on splitting says it does not, and so does the local
    // ESM by default. Then only an invocation that finishes no record, where nothing is split off, uses
    // one. The first record starts with the whole timeout ahead (the deadline only stops new starts) and
    // runs until the processor aborts the requests still open, at margin x MARGIN_SHARE.requests left
    // (@mcp-pipeline/batch request-deadline.ts): a record longer than that never finishes.
    const firstRecordMs =
      s.processor.timeout_seconds * 1000 - s.processor.deadline_margin_ms * MARGIN_SHARE.requests;
    if (firstRecordMs >= recordMs) return undefined;
    return {
      setting: "processor.timeout_seconds",
      message: `one record x ${TOLERATED_SLOWDOWN} slowdown = ${recordMs} ms > ${firstRecordMs} ms before the processor cuts a record's requests off (timeout - margin x ${MARGIN_SHARE.requests}): with the downstream ${TOLERATED_SLOWDOWN} times slower than expected no invocation finishes a record, so each deadline answer uses a retry until they run out and records that never failed go to the failure queue (§1.4 "Bisect on": a split that finishes records uses no retry by AWS's wording on splitting, an undocumented accounting)`,
    };
  }
  // Every deadline answer uses a retry (§1.4 "Bisect off", AWS-recorded), so a downstream that is only
  // slow sends records to the failure queue once (retries + 1) invocations cannot get through a batch.
  // Worst case: one partition key, so the batch runs one record at a time.
  const invocations = esm.maximum_retry_attempts + 1;
  const usableMs = s.processor.timeout_seconds * 1000 - s.processor.deadline_margin_ms;
  if (invocations * usableMs >= esm.batch_size * recordMs) return undefined;
  return {
    setting: "processor.esm.maximum_retry_attempts",
    message: `${invocations} invocations x ${usableMs} ms usable (timeout - deadline margin) < ${TOLERATED_SLOWDOWN} x ${esm.batch_size} records x ${s.processor.expected_record_latency_ms} ms: a downstream ${TOLERATED_SLOWDOWN} times slower than expected makes deadline partial responses until the retries run out, and records that never failed go to the failure queue (§1.4 "Bisect off": every partial answer uses a retry)`,
  };
}

/** A module of the pipeline: its name and, when it is one instance per key, its `for_each` expression. */
export interface WiredModule {
  readonly name: string;
  readonly forEach?: string;
}

/** The wiring of the pipeline module: which queues and functions feed the alarms module. */
export interface Wiring {
  readonly queues: readonly WiredModule[];
  readonly functions: readonly WiredModule[];
  /** The alarms module's `dead_letter_queues`, `source_queues` and `functions` expressions. */
  readonly alarmInputs: {
    readonly deadLetterQueues: string;
    readonly sourceQueues: string;
    readonly functions: string;
  };
}

/**
 * Whether an alarm input covers a module: a single module is named with its output
 * (`module.processor.name`); a `for_each` module is covered by a `for` over the same collection that
 * indexes it (`for key, c in local.sqs_consumers : ... module.queue[c.queue].name`).
 */
function covers(input: string, module: WiredModule, output: string): boolean {
  if (module.forEach === undefined) return input.includes(`module.${module.name}${output}`);
  return (
    new RegExp(`\\bin ${module.forEach.replaceAll(".", "\\.")}\\s*:`).test(input) &&
    new RegExp(`module\\.${module.name}\\[[^\\]]+\\]${output.replaceAll(".", "\\.")}`).test(input)
  );
}

export function wiringFindings(wiring: Wiring): Finding[] {
  const out: Finding[] = [];
  for (const q of wiring.queues) {
    if (!covers(wiring.alarmInputs.deadLetterQueues, q, ".dlq_name")) {
      out.push({
        rule: RuleId.MissingAlarms,
        setting: `module.${q.name}`,
        message: `queue ${q.name}: its DLQ has no alarms`,
      });
    }
    if (!covers(wiring.alarmInputs.sourceQueues, q, ".name")) {
      out.push({
        rule: RuleId.MissingAlarms,
        setting: `module.${q.name}`,
        message: `queue ${q.name}: no alarm on its backlog age`,
      });
    }
  }
  for (const f of wiring.functions) {
    if (!covers(wiring.alarmInputs.functions, f, "")) {
      out.push({
        rule: RuleId.MissingAlarms,
        setting: `module.${f.name}`,
        message: `function ${f.name}: no Errors, Throttles and Duration alarms`,
      });
    }
  }
  return out;
}
