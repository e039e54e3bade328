# The whole pipeline of one environment: every module wired together from the environment's settings.
locals {
  p    = var.name_prefix
  tags = merge(var.tags, { environment = var.environment, system = "mcp-event-pipelines" })

  # dist/manifest.json: the artifacts built once and promoted unchanged from dev to prod.
  artifact = {
    for name, a in var.manifest.artifacts : name => {
      path    = abspath("${var.repository_root}/${a.path}")
      sha256  = a.sha256
      handler = a.handler
      runtime = a.runtime
    }
  }
  has_redrive = contains(keys(var.manifest.artifacts), "dlq-redrive")
}

data "aws_caller_identity" "current" {}

module "stream" {
  source                         = "../stream"
  name                           = "${local.p}-events"
  mode                           = var.stream.mode
  shard_count                    = var.stream.shard_count
  retention_period_hours         = var.stream.retention_period_hours
  enhanced_fan_out_consumer_name = var.processor.esm.enhanced_fan_out ? "${local.p}-processor" : null
  tags                           = local.tags
}

module "tool_calls_table" {
  source   = "../table"
  name     = "${local.p}-tool-calls"
  hash_key = "callId"
  tags     = local.tags
}

module "dedupe_table" {
  source        = "../table"
  name          = "${local.p}-dedupe"
  hash_key      = "id"
  ttl_attribute = "expiresAt"
  tags          = local.tags
}

module "quarantine_bucket" {
  source          = "../bucket"
  name            = "${local.p}-quarantine-${data.aws_caller_identity.current.account_id}"
  expiration_days = var.quarantine_expiration_days
  tags            = local.tags
}

module "results_bucket" {
  source          = "../bucket"
  name            = "${local.p}-results-${data.aws_caller_identity.current.account_id}"
  expiration_days = var.results_expiration_days
  tags            = local.tags
}

module "tool_queue" {
  source                        = "../queue"
  name                          = "${local.p}-tool-jobs"
  visibility_timeout_seconds    = var.tool_worker.queue.visibility_timeout_seconds
  message_retention_seconds     = var.tool_worker.queue.message_retention_seconds
  dlq_message_retention_seconds = var.tool_worker.queue.dlq_message_retention_seconds
  max_receive_count             = var.tool_worker.queue.max_receive_count
  tags                          = local.tags
}

module "fifo_queue" {
  source                        = "../queue"
  name                          = "${local.p}-session-jobs"
  fifo                          = true
  visibility_timeout_seconds    = var.fifo_worker.queue.visibility_timeout_seconds
  message_retention_seconds     = var.fifo_worker.queue.message_retention_seconds
  dlq_message_retention_seconds = var.fifo_worker.queue.dlq_message_retention_seconds
  max_receive_count             = var.fifo_worker.queue.max_receive_count
  tags                          = local.tags
}

# On-failure records of the processor's ESM; consumed by dlq-redrive. A standard queue: FIFO queues
# are not supported as ESM destinations (docs/aws-semantics.md §1.6).
module "failure_queue" {
  source                        = "../queue"
  name                          = "${local.p}-stream-failures"
  visibility_timeout_seconds    = var.dlq_redrive.queue.visibility_timeout_seconds
  message_retention_seconds     = var.dlq_redrive.queue.message_retention_seconds
  dlq_message_retention_seconds = var.dlq_redrive.queue.dlq_message_retention_seconds
  max_receive_count             = var.dlq_redrive.queue.max_receive_count
  tags                          = local.tags
}

module "processor" {
  source               = "../function"
  name                 = "${local.p}-processor"
  artifact             = local.artifact["processor"]
  timeout_seconds      = var.processor.timeout_seconds
  memory_mb            = var.processor.memory_mb
  reserved_concurrency = var.processor.reserved_concurrency
  log_retention_days   = var.processor.log_retention_days
  # No dedupe table: the processor's effect is a join and is its own idempotency (docs/idempotency.md).
  environment = merge(var.processor.environment, {
    TOOL_CALLS_TABLE  = module.tool_calls_table.name
    QUARANTINE_BUCKET = module.quarantine_bucket.name
  })
  policy_statements = [
    {
      sid = "ReadStream"
      actions = [
        "kinesis:DescribeStream", "kinesis:DescribeStreamSummary", "kinesis:GetRecords",
        "kinesis:GetShardIterator", "kinesis:ListShards", "kinesis:SubscribeToShard",
      ]
      resources = compact([module.stream.arn, module.stream.consumer_arn])
    },
    {
      sid       = "SendOnFailureRecords"
      actions   = ["sqs:SendMessage"]
      resources = [module.failure_queue.arn]
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
  ]
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
  on_failure_destination_arn         = var.processor.esm.on_failure_destination ? module.failure_queue.arn : null
}

module "tool_worker" {
  source               = "../function"
  name                 = "${local.p}-tool-worker"
  artifact             = local.artifact["tool-worker"]
  timeout_seconds      = var.tool_worker.timeout_seconds
  memory_mb            = var.tool_worker.memory_mb
  reserved_concurrency = var.tool_worker.reserved_concurrency
  log_retention_days   = var.tool_worker.log_retention_days
  environment = merge(var.tool_worker.environment, {
    TOOL_CALLS_TABLE      = module.tool_calls_table.name
    DEDUPE_TABLE          = module.dedupe_table.name
    RESULTS_BUCKET        = module.results_bucket.name
    EVENTS_STREAM_NAME    = module.stream.name
    DEAD_LETTER_QUEUE_URL = module.tool_queue.dlq_url
    # A job failing at its queue's last receive is recorded dead-lettered in the tool-calls table.
    MAX_RECEIVE_COUNT = tostring(var.tool_worker.queue.max_receive_count)
  })
  policy_statements = [
    {
      sid       = "ConsumeJobs"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"]
      resources = [module.tool_queue.arn]
    },
    {
      sid       = "DeadLetterPoison"
      actions   = ["sqs:SendMessage"]
      resources = [module.tool_queue.dlq_arn]
    },
    {
      sid       = "PublishEvents"
      actions   = ["kinesis:PutRecords", "kinesis:PutRecord"]
      resources = [module.stream.arn]
    },
    {
      sid       = "ToolCallsAndDedupe"
      actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]
      resources = [module.tool_calls_table.arn, module.dedupe_table.arn]
    },
    {
      sid       = "WriteResults"
      actions   = ["s3:PutObject"]
      resources = ["${module.results_bucket.arn}/results/*"]
    },
  ]
  tags = local.tags
}

module "tool_worker_esm" {
  source                             = "../sqs-esm"
  function_name                      = module.tool_worker.arn
  queue_arn                          = module.tool_queue.arn
  batch_size                         = var.tool_worker.esm.batch_size
  maximum_batching_window_in_seconds = var.tool_worker.esm.maximum_batching_window_in_seconds
  maximum_concurrency                = var.tool_worker.esm.maximum_concurrency
  report_batch_item_failures         = var.tool_worker.esm.report_batch_item_failures
}

module "fifo_worker" {
  source               = "../function"
  name                 = "${local.p}-fifo-worker"
  artifact             = local.artifact["fifo-worker"]
  timeout_seconds      = var.fifo_worker.timeout_seconds
  memory_mb            = var.fifo_worker.memory_mb
  reserved_concurrency = var.fifo_worker.reserved_concurrency
  log_retention_days   = var.fifo_worker.log_retention_days
  environment = merge(var.fifo_worker.environment, {
    TOOL_CALLS_TABLE      = module.tool_calls_table.name
    DEDUPE_TABLE          = module.dedupe_table.name
    RESULTS_BUCKET        = module.results_bucket.name
    EVENTS_STREAM_NAME    = module.stream.name
    DEAD_LETTER_QUEUE_URL = module.fifo_queue.dlq_url
    # A job failing at its queue's last receive is recorded dead-lettered in the tool-calls table.
    MAX_RECEIVE_COUNT = tostring(var.fifo_worker.queue.max_receive_count)
  })
  policy_statements = [
    {
      sid       = "ConsumeJobs"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"]
      resources = [module.fifo_queue.arn]
    },
    {
      sid       = "DeadLetterPoison"
      actions   = ["sqs:SendMessage"]
      resources = [module.fifo_queue.dlq_arn]
    },
    {
      sid       = "PublishEvents"
      actions   = ["kinesis:PutRecords", "kinesis:PutRecord"]
      resources = [module.stream.arn]
    },
    {
      sid       = "ToolCallsAndDedupe"
      actions   = ["dynamodb:GetItem", "dynamodb:BatchGetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"]
      resources = [module.tool_calls_table.arn, module.dedupe_table.arn]
    },
    {
      sid       = "WriteResults"
      actions   = ["s3:PutObject"]
      resources = ["${module.results_bucket.arn}/results/*"]
    },
  ]
  tags = local.tags
}

module "fifo_worker_esm" {
  source                     = "../sqs-esm"
  function_name              = module.fifo_worker.arn
  queue_arn                  = module.fifo_queue.arn
  fifo                       = true
  batch_size                 = var.fifo_worker.esm.batch_size
  maximum_concurrency        = var.fifo_worker.esm.maximum_concurrency
  report_batch_item_failures = var.fifo_worker.esm.report_batch_item_failures
}

# dlq-redrive is deployed once its artifact is in the manifest; the failure queue exists either way.
module "dlq_redrive" {
  source               = "../function"
  count                = local.has_redrive ? 1 : 0
  name                 = "${local.p}-dlq-redrive"
  artifact             = local.artifact["dlq-redrive"]
  timeout_seconds      = var.dlq_redrive.timeout_seconds
  memory_mb            = var.dlq_redrive.memory_mb
  reserved_concurrency = var.dlq_redrive.reserved_concurrency
  log_retention_days   = var.dlq_redrive.log_retention_days
  environment = merge(var.dlq_redrive.environment, {
    QUARANTINE_BUCKET     = module.quarantine_bucket.name
    STREAM_NAME           = module.stream.name
    DEAD_LETTER_QUEUE_URL = module.failure_queue.dlq_url
  })
  policy_statements = [
    {
      sid       = "ConsumeFailureRecords"
      actions   = ["sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:ChangeMessageVisibility"]
      resources = [module.failure_queue.arn]
    },
    {
      sid       = "KeepMalformedFailureRecords"
      actions   = ["sqs:SendMessage"]
      resources = [module.failure_queue.dlq_arn]
    },
    {
      sid       = "RereadAndReplay"
      actions   = ["kinesis:GetShardIterator", "kinesis:GetRecords", "kinesis:DescribeStreamSummary", "kinesis:ListShards", "kinesis:PutRecords"]
      resources = [module.stream.arn]
    },
    {
      sid       = "Quarantine"
      actions   = ["s3:PutObject", "s3:GetObject"]
      resources = ["${module.quarantine_bucket.arn}/kinesis/*"]
    },
    {
      sid       = "ListQuarantine"
      actions   = ["s3:ListBucket"]
      resources = [module.quarantine_bucket.arn]
    },
    {
      # Manual "redrive-dlq" invocations move the workers' DLQs back to their sources.
      sid       = "RedriveDeadLetterQueues"
      actions   = ["sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"]
      resources = [module.tool_queue.dlq_arn, module.fifo_queue.dlq_arn]
    },
    {
      sid       = "RedriveTargets"
      actions   = ["sqs:SendMessage", "sqs:GetQueueAttributes"]
      resources = [module.tool_queue.arn, module.fifo_queue.arn]
    },
  ]
  tags = local.tags
}

module "dlq_redrive_esm" {
  source                     = "../sqs-esm"
  count                      = local.has_redrive ? 1 : 0
  function_name              = module.dlq_redrive[0].arn
  queue_arn                  = module.failure_queue.arn
  batch_size                 = var.dlq_redrive.esm.batch_size
  maximum_concurrency        = var.dlq_redrive.esm.maximum_concurrency
  report_batch_item_failures = var.dlq_redrive.esm.report_batch_item_failures
}

module "alarms" {
  source                         = "../alarms"
  name_prefix                    = local.p
  region                         = var.region
  notification_emails            = var.notification_emails
  iterator_age_ms                = var.alarms.iterator_age_ms
  dlq_oldest_message_age_seconds = var.alarms.dlq_oldest_message_age_seconds
  duration_timeout_ratio         = var.alarms.duration_timeout_ratio
  stream_consumer = {
    function_name = module.processor.name
    esm_uuid      = module.processor_esm.uuid
  }
  functions = merge(
    {
      processor     = { name = module.processor.name, timeout_seconds = module.processor.timeout_seconds }
      "tool-worker" = { name = module.tool_worker.name, timeout_seconds = module.tool_worker.timeout_seconds }
      "fifo-worker" = { name = module.fifo_worker.name, timeout_seconds = module.fifo_worker.timeout_seconds }
    },
    local.has_redrive ? { "dlq-redrive" = { name = module.dlq_redrive[0].name, timeout_seconds = module.dlq_redrive[0].timeout_seconds } } : {},
  )
  source_queues = {
    "tool-jobs"       = { name = module.tool_queue.name, max_age_seconds = var.tool_worker.queue.visibility_timeout_seconds * 2 }
    "session-jobs"    = { name = module.fifo_queue.name, max_age_seconds = var.fifo_worker.queue.visibility_timeout_seconds * 2 }
    "stream-failures" = { name = module.failure_queue.name, max_age_seconds = var.dlq_redrive.queue.visibility_timeout_seconds * 2 }
  }
  dead_letter_queues = {
    "tool-jobs"       = module.tool_queue.dlq_name
    "session-jobs"    = module.fifo_queue.dlq_name
    "stream-failures" = module.failure_queue.dlq_name
  }
  tags = local.tags
}
