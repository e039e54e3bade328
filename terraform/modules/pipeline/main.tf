# The whole pipeline of one environment: every module wired together from the environment's settings.
locals {
  p = var.name_prefix
  # Every resource's name is <prefix>-<suffix>; the suffixes are declared once, for Terraform and the
  # TypeScript that names the same resources (@mcp-pipeline/settings' resourceNames).
  names = jsondecode(file("${path.module}/resource-names.json"))
  tags  = merge(var.tags, { environment = var.environment, system = "mcp-event-pipelines" })
  # The functions' roles under /<prefix>/, the path terraform/bootstrap lets this environment's deploy
  # role manage (and no other).
  function_role_path = "/${var.name_prefix}/"

  # dist/manifest.json: the artifacts built once and promoted unchanged from dev to prod.
  artifact = {
    for name, a in var.manifest.artifacts : name => {
      path    = abspath("${var.repository_root}/${a.path}")
      sha256  = a.sha256
      handler = a.handler
      runtime = a.runtime
    }
  }
}

# Each function's environment, declared once in function-environment.json: its tuning settings
# (terraform.tfvars.json: concurrency, deadline_margin_ms...) become the variables the function reads, and
# the wired variables take the resource or setting they name. The local pipeline builds the same from the
# same file (@mcp-pipeline/settings' functionEnvironment), and tf:check holds what was applied to it.
locals {
  wiring = jsondecode(file("${path.module}/function-environment.json"))
  function_settings = {
    processor   = var.processor
    tool_worker = var.tool_worker
    fifo_worker = var.fifo_worker
    dlq_redrive = var.dlq_redrive
  }
  # The sources of the queue each SQS consumer consumes; the processor has none.
  queue_sources = {
    for fn, c in local.sqs_consumers : fn => {
      "queue.dlq_url"           = module.queue[c.queue].dlq_url
      "queue.max_receive_count" = tostring(c.settings.queue.max_receive_count)
    }
  }
  # What a wired variable can be set from (function-environment.json's `sources`), by function.
  wiring_sources = {
    for fn in keys(local.function_settings) : fn => merge(
      {
        tool_calls_table  = module.tool_calls_table.name
        dedupe_table      = module.dedupe_table.name
        results_bucket    = module.results_bucket.name
        quarantine_bucket = module.quarantine_bucket.name
        stream            = module.stream.name
        test_tools        = local.wiring.sources.test_tools.values[tostring(var.test_tools)]
      },
      try(local.queue_sources[fn], {}),
    )
  }
  # The free-form `environment` setting may not name a declared variable (a validation of each function's
  # variable), so the order of the merge decides nothing.
  function_environment = {
    for fn, settings in local.function_settings : fn => merge(
      settings.environment,
      { for field, t in local.wiring.functions[fn].tuning : t.variable => tostring(settings[field]) },
      { for variable, source in local.wiring.functions[fn].wired : variable => local.wiring_sources[fn][source] },
    )
  }
}

data "aws_caller_identity" "current" {}
data "aws_partition" "current" {}

module "stream" {
  source                         = "../stream"
  name                           = "${local.p}-${local.names.stream}"
  mode                           = var.stream.mode
  shard_count                    = var.stream.shard_count
  retention_period_hours         = var.stream.retention_period_hours
  enhanced_fan_out_consumer_name = var.processor.esm.enhanced_fan_out ? "${local.p}-${local.names.stream_consumer}" : null
  tags                           = local.tags
}

module "tool_calls_table" {
  source   = "../table"
  name     = "${local.p}-${local.names.tool_calls_table}"
  hash_key = "callId"
  tags     = local.tags
}

module "dedupe_table" {
  source        = "../table"
  name          = "${local.p}-${local.names.dedupe_table}"
  hash_key      = "id"
  ttl_attribute = "expiresAt"
  tags          = local.tags
}

# The only copy of the records the pipeline could not apply (docs/security.md, "Runtime"): nothing expires
# but replayed records, and only when the settings say so (the replay tags them replayed = true); deletion
# and unprotecting are the break-glass role's alone; every write is If-None-Match: *.
module "quarantine_bucket" {
  source = "../bucket"
  name   = "${local.p}-${local.names.quarantine_bucket}-${data.aws_caller_identity.current.account_id}"
  expiration = var.quarantine.replayed_expiration_days == null ? null : {
    days        = var.quarantine.replayed_expiration_days
    only_tagged = { key = "replayed", value = "true" }
    # The replay journals (docs/operations.md "The replay journal") go with the objects they name.
    also_prefix = "replays/"
  }
  protection = {
    break_glass_role_arn = var.quarantine.break_glass_role_name == null ? null : "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:role/${var.quarantine.break_glass_role_name}"
  }
  object_lock = var.quarantine.object_lock_mode == "off" ? null : {
    mode = var.quarantine.object_lock_mode
    days = var.quarantine.object_lock_days
  }
  tags = local.tags
}

# Large tool results: the tool-calls table points at them, and they expire with their use.
module "results_bucket" {
  source     = "../bucket"
  name       = "${local.p}-${local.names.results_bucket}-${data.aws_caller_identity.current.account_id}"
  expiration = { days = var.results_expiration_days }
  tags       = local.tags
}

module "processor" {
  source               = "../function"
  name                 = "${local.p}-${local.names.functions.processor}"
  artifact             = local.artifact["processor"]
  timeout_seconds      = var.processor.timeout_seconds
  memory_mb            = var.processor.memory_mb
  reserved_concurrency = var.processor.reserved_concurrency
  log_retention_days   = var.processor.log_retention_days

  # Under the environment's path, with its boundary (terraform/bootstrap, docs/security.md).
  role_path                = local.function_role_path
  permissions_boundary_arn = var.function_permissions_boundary_arn

  # No dedupe table: the processor's effect is a join and is its own idempotency (docs/idempotency.md).
  environment = local.function_environment.processor
  # Every statement is checked after apply against the calls the processor's bundle makes and what
  # Lambda's mapping does with the role (tools/terraform/src/tf-check/permissions, docs/aws-semantics.md §11).
  policy_statements = concat(
    [
      {
        # Lambda's Kinesis mapping reads the stream with the function's role (§11).
        sid = "ReadStream"
        actions = [
          "kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
          "kinesis:GetShardIterator", "kinesis:ListShards", "kinesis:SubscribeToShard",
        ]
        resources = [module.stream.arn]
      },
      {
        # Lambda sends the mapping's on-failure records with the function's role (§1.6).
        sid       = "SendOnFailureRecords"
        actions   = ["sqs:SendMessage"]
        resources = [module.queue["stream_failures"].arn]
      },
      {
        # One conditional PutItem per call per batch, after one BatchGetItem (and a GetItem after a lost race).
        sid       = "ToolCalls"
        actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"]
        resources = [module.tool_calls_table.arn]
      },
      {
        sid       = "WriteQuarantine"
        actions   = ["s3:PutObject"]
        resources = ["${module.quarantine_bucket.arn}/kinesis/*"]
      },
    ],
    # With enhanced fan-out the mapping describes its consumer and subscribes through it (§11).
    var.processor.esm.enhanced_fan_out ? [
      {
        sid       = "ReadThroughConsumer"
        actions   = ["kinesis:DescribeStreamConsumer", "kinesis:SubscribeToShard"]
        resources = [module.stream.consumer_arn]
      },
    ] : [],
  )
  tags = local.tags
}

module "processor_esm" {
  source                             = "../kinesis-esm"
  function_name                      = module.processor.arn
  event_source_arn                   = module.stream.event_source_arn
  starting_position                  = var.processor.esm.starting_position
  batch_size                         = var.processor.esm.batch_size
  maximum_batching_window_in_seconds = var.processor.esm.maximum_batching_window_in_seconds
  parallelization_factor             = var.processor.esm.parallelization_factor
  maximum_retry_attempts             = var.processor.esm.maximum_retry_attempts
  maximum_record_age_in_seconds      = var.processor.esm.maximum_record_age_in_seconds
  bisect_batch_on_function_error     = var.processor.esm.bisect_batch_on_function_error
  report_batch_item_failures         = var.processor.esm.report_batch_item_failures
  on_failure_destination_arn         = var.processor.esm.on_failure_destination ? module.queue["stream_failures"].arn : null
}

# The SQS consumers, one entry each: a source queue and its DLQ, a function and its event source mapping
# (docs/aws-semantics.md §2-3). What differs between them is data: FIFO or not, their environment and the
# statements beyond consuming their queue and dead-lettering into its DLQ.
locals {
  sqs_consumer_settings = {
    tool_worker = { artifact = "tool-worker", settings = var.tool_worker }
    fifo_worker = { artifact = "fifo-worker", settings = var.fifo_worker }
    dlq_redrive = { artifact = "dlq-redrive", settings = var.dlq_redrive }
  }
  # Which queue each consumes is declared with the queues' names (resource-names.json). The failure queue
  # holds the on-failure records of the processor's ESM: a standard queue, since FIFO queues are not
  # supported as ESM destinations (docs/aws-semantics.md §1.6).
  sqs_consumers = {
    for queue, q in local.names.queues : q.consumer => merge(local.sqs_consumer_settings[q.consumer], { queue = queue })
  }
  # The consumers' queues, keyed by queue; FIFO or not is part of the name (resource-names.json).
  queues = {
    for key, c in local.sqs_consumers : c.queue => {
      name     = "${local.p}-${local.names.queues[c.queue].suffix}"
      fifo     = local.names.queues[c.queue].fifo
      settings = c.settings.queue
    }
  }
  # Every queue exists; dlq-redrive is deployed once its artifact is in the manifest.
  deployed_sqs_consumers = { for key, c in local.sqs_consumers : key => c if key != "dlq_redrive" || contains(keys(var.manifest.artifacts), c.artifact) }

  worker_statements = [
    {
      sid       = "PublishEvents"
      actions   = ["kinesis:PutRecords"]
      resources = [module.stream.arn]
    },
    {
      # A call's state: read (one BatchGetItem per batch, a GetItem per call it did not cover) and written
      # conditionally on the version read.
      sid       = "ToolCalls"
      actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem"]
      resources = [module.tool_calls_table.arn]
    },
    {
      # The two-phase dedupe: claim (PutItem), complete (UpdateItem), release (DeleteItem), read back.
      sid       = "Dedupe"
      actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]
      resources = [module.dedupe_table.arn]
    },
    {
      sid       = "WriteResults"
      actions   = ["s3:PutObject"]
      resources = ["${module.results_bucket.arn}/results/*"]
    },
  ]
  # The workers' retry backoff: a worker sets a reported job's visibility on its own queue (§2.6,
  # packages/worker/src/redelivery.ts); ChangeMessageVisibility also authorises the Batch call.
  retry_backoff = {
    for key in ["tool_worker", "fifo_worker"] : key => {
      sid       = "RetryBackoff"
      actions   = ["sqs:ChangeMessageVisibility"]
      resources = [module.queue[local.sqs_consumers[key].queue].arn]
    }
  }
  sqs_consumer_statements = {
    tool_worker = concat(local.worker_statements, [local.retry_backoff.tool_worker])
    fifo_worker = concat(local.worker_statements, [local.retry_backoff.fifo_worker])
    dlq_redrive = [
      {
        # A replay checks first that its stream is there and active (DescribeStreamSummary).
        sid       = "RereadAndReplay"
        actions   = ["kinesis:GetShardIterator", "kinesis:GetRecords", "kinesis:PutRecords", "kinesis:DescribeStreamSummary"]
        resources = [module.stream.arn]
      },
      {
        # Write (If-None-Match: *) and read records; a replay tags them replayed.
        sid       = "Quarantine"
        actions   = ["s3:PutObject", "s3:GetObject", "s3:GetObjectTagging", "s3:PutObjectTagging"]
        resources = ["${module.quarantine_bucket.arn}/kinesis/*"]
      },
      {
        # A replay writes a journal (If-None-Match: *) of each chunk it marked; a scan reads them, and
        # does not read again the objects they name (packages/recovery/src/replay-journal.ts).
        sid       = "ReplayJournals"
        actions   = ["s3:PutObject", "s3:GetObject"]
        resources = ["${module.quarantine_bucket.arn}/replays/*"]
      },
      {
        sid       = "ListQuarantine"
        actions   = ["s3:ListBucket"]
        resources = [module.quarantine_bucket.arn]
      },
      {
        # Manual "redrive-dlq" invocations move the workers' DLQs back to their sources; a dry run counts a
        # standard DLQ by receiving its messages and then makes them visible again (ChangeMessageVisibility).
        # Its checks look each queue up (GetQueueUrl, for an ARN) and list the DLQ's sources.
        sid = "RedriveDeadLetterQueues"
        actions = [
          "sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:ReceiveMessage", "sqs:ChangeMessageVisibility", "sqs:DeleteMessage",
          "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ListDeadLetterSourceQueues",
        ]
        resources = [module.queue["tool_jobs"].dlq_arn, module.queue["session_jobs"].dlq_arn]
      },
      {
        sid       = "RedriveTargets"
        actions   = ["sqs:SendMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl"]
        resources = [module.queue["tool_jobs"].arn, module.queue["session_jobs"].arn]
      },
    ]
  }
  # The statement ids each consumer had before the consumers became one for_each: kept, so that the
  # policies do not change.
  consume_sids = {
    tool_worker = { consume = "ConsumeJobs", dead_letter = "DeadLetterPoison" }
    fifo_worker = { consume = "ConsumeJobs", dead_letter = "DeadLetterPoison" }
    dlq_redrive = { consume = "ConsumeFailureRecords", dead_letter = "KeepMalformedFailureRecords" }
  }
}

module "queue" {
  source                        = "../queue"
  for_each                      = local.queues
  name                          = each.value.name
  fifo                          = each.value.fifo
  visibility_timeout_seconds    = each.value.settings.visibility_timeout_seconds
  message_retention_seconds     = each.value.settings.message_retention_seconds
  dlq_message_retention_seconds = each.value.settings.dlq_message_retention_seconds
  max_receive_count             = each.value.settings.max_receive_count
  tags                          = local.tags
}

module "sqs_consumer" {
  source               = "../function"
  for_each             = local.deployed_sqs_consumers
  name                 = "${local.p}-${local.names.functions[each.key]}"
  artifact             = local.artifact[each.value.artifact]
  timeout_seconds      = each.value.settings.timeout_seconds
  memory_mb            = each.value.settings.memory_mb
  reserved_concurrency = each.value.settings.reserved_concurrency
  log_retention_days   = each.value.settings.log_retention_days

  # Under the environment's path, with its boundary (terraform/bootstrap, docs/security.md).
  role_path                = local.function_role_path
  permissions_boundary_arn = var.function_permissions_boundary_arn

  environment = local.function_environment[each.key]
  policy_statements = concat(
    [
      {
        # Lambda's SQS mapping polls the queue with the function's role (§11).
        sid       = local.consume_sids[each.key].consume
        actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
        resources = [module.queue[each.value.queue].arn]
      },
      {
        sid       = local.consume_sids[each.key].dead_letter
        actions   = ["sqs:SendMessage"]
        resources = [module.queue[each.value.queue].dlq_arn]
      },
    ],
    local.sqs_consumer_statements[each.key],
  )
  tags = local.tags
}

module "sqs_consumer_esm" {
  source        = "../sqs-esm"
  for_each      = local.deployed_sqs_consumers
  function_name = module.sqs_consumer[each.key].arn
  queue_arn     = module.queue[each.value.queue].arn
  fifo          = local.queues[each.value.queue].fifo
  batch_size    = each.value.settings.esm.batch_size
  # The module ignores the window on a FIFO mapping (§3).
  maximum_batching_window_in_seconds = each.value.settings.esm.maximum_batching_window_in_seconds
  maximum_concurrency                = each.value.settings.esm.maximum_concurrency
  report_batch_item_failures         = each.value.settings.esm.report_batch_item_failures
}

# Where each consumer lived before it was one entry of the for_each: an existing state moves, nothing is
# destroyed and created again.
moved {
  from = module.tool_queue
  to   = module.queue["tool_jobs"]
}
moved {
  from = module.fifo_queue
  to   = module.queue["session_jobs"]
}
moved {
  from = module.failure_queue
  to   = module.queue["stream_failures"]
}
moved {
  from = module.tool_worker
  to   = module.sqs_consumer["tool_worker"]
}
moved {
  from = module.tool_worker_esm
  to   = module.sqs_consumer_esm["tool_worker"]
}
moved {
  from = module.fifo_worker
  to   = module.sqs_consumer["fifo_worker"]
}
moved {
  from = module.fifo_worker_esm
  to   = module.sqs_consumer_esm["fifo_worker"]
}
moved {
  from = module.dlq_redrive[0]
  to   = module.sqs_consumer["dlq_redrive"]
}
moved {
  from = module.dlq_redrive_esm[0]
  to   = module.sqs_consumer_esm["dlq_redrive"]
}

module "alarms" {
  source                         = "../alarms"
  name_prefix                    = local.p
  region                         = var.region
  runbook_url                    = var.runbook_url
  notification_emails            = var.notification_emails
  iterator_age_ms                = var.alarms.iterator_age_ms
  dlq_oldest_message_age_seconds = var.alarms.dlq_oldest_message_age_seconds
  duration_timeout_ratio         = var.alarms.duration_timeout_ratio
  stream_consumer = {
    function_name = module.processor.name
    esm_uuid      = module.processor_esm.uuid
  }
  functions = merge(
    { processor = { name = module.processor.name, timeout_seconds = module.processor.timeout_seconds } },
    { for key, c in local.deployed_sqs_consumers : c.artifact => { name = module.sqs_consumer[key].name, timeout_seconds = module.sqs_consumer[key].timeout_seconds } },
  )
  source_queues = {
    for key, q in local.queues : local.names.queues[key].suffix => { name = module.queue[key].name, max_age_seconds = q.settings.visibility_timeout_seconds * 2 }
  }
  dead_letter_queues = { for key, q in local.queues : local.names.queues[key].suffix => module.queue[key].dlq_name }
  tags               = local.tags

  # The roles the alarm key's policy names (docs/security.md, "KMS").
  key_administrator_arns = var.alarm_key_administrator_arns
  key_reader_arns        = var.alarm_key_reader_arns
}
