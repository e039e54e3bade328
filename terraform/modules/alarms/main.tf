data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

# A customer-managed key for the alarm topic. CloudWatch alarms cannot publish to a topic encrypted with
# the AWS-managed alias/aws/sns: its key policy does not let cloudwatch.amazonaws.com use the key and it
# cannot be edited, so every notification would be dropped (AWS knowledge center, "Why didn't I receive
# an SNS notification for my CloudWatch alarm trigger?"). This key's policy lets CloudWatch encrypt
# (GenerateDataKey*) and decrypt for this account's alarms only.
#
# Who manages the key is said here, by name, not by a tag: the account's administrators through IAM, and
# key_administrator_arns (the environment's deploy role); key_reader_arns (its plan role) read its
# configuration. A tag-based grant could be taken over by re-tagging another environment's key
# (docs/security.md), so the key carries no tags and grants nothing by tag.
locals {
  key_administration = [
    "kms:DescribeKey", "kms:GetKeyPolicy", "kms:PutKeyPolicy", "kms:GetKeyRotationStatus", "kms:EnableKeyRotation",
    "kms:ListResourceTags", "kms:UpdateKeyDescription", "kms:ScheduleKeyDeletion", "kms:CreateAlias", "kms:UpdateAlias",
    "kms:DeleteAlias",
  ]
  key_reading = ["kms:DescribeKey", "kms:GetKeyPolicy", "kms:GetKeyRotationStatus", "kms:ListResourceTags"]
}

resource "aws_kms_key" "alarms" {
  description             = "${var.name_prefix}: the alarm topic's key, usable by CloudWatch alarms."
  enable_key_rotation     = true
  deletion_window_in_days = 30
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = concat(
      [
        {
          Sid       = "AccountAdministersThroughIam"
          Effect    = "Allow"
          Principal = { AWS = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}:root" }
          Action    = "kms:*"
          Resource  = "*"
        },
        {
          Sid       = "CloudWatchAlarmsPublish"
          Effect    = "Allow"
          Principal = { Service = "cloudwatch.amazonaws.com" }
          Action    = ["kms:Decrypt", "kms:GenerateDataKey*"]
          Resource  = "*"
          # This environment's alarms only: with the account alone, an alarm of another environment of the
          # account (whose deploy role names this topic among its alarm actions) could page this one's.
          Condition = {
            StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id }
            ArnLike      = { "aws:SourceArn" = "arn:${data.aws_partition.current.partition}:cloudwatch:${var.region}:${data.aws_caller_identity.current.account_id}:alarm:${var.name_prefix}-*" }
          }
        },
      ],
      length(var.key_administrator_arns) == 0 ? [] : [
        {
          Sid       = "KeyAdministrators"
          Effect    = "Allow"
          Principal = { AWS = var.key_administrator_arns }
          Action    = local.key_administration
          Resource  = "*"
        },
      ],
      length(var.key_reader_arns) == 0 ? [] : [
        {
          Sid       = "KeyReaders"
          Effect    = "Allow"
          Principal = { AWS = var.key_reader_arns }
          Action    = local.key_reading
          Resource  = "*"
        },
      ],
    )
  })
}

resource "aws_kms_alias" "alarms" {
  name          = "alias/${var.name_prefix}-alarms"
  target_key_id = aws_kms_key.alarms.key_id
}

resource "aws_sns_topic" "alarms" {
  name              = "${var.name_prefix}-alarms"
  kms_master_key_id = aws_kms_key.alarms.arn
  tags              = var.tags
}

# The topic's own policy. Without one, SNS gives a topic its default policy, which lets every principal of
# the account publish to it, subscribe to it, change its attributes and permissions, or delete it: with
# several environments in one account, every other environment's roles (docs/security.md). Here CloudWatch
# alone may publish, for this environment's alarms; the environment's deploy and plan roles manage and
# read the topic through their own IAM policies, as the account's administrators do.
resource "aws_sns_topic_policy" "alarms" {
  arn = aws_sns_topic.alarms.arn
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [
      {
        Sid       = "CloudWatchAlarmsPublish"
        Effect    = "Allow"
        Principal = { Service = "cloudwatch.amazonaws.com" }
        Action    = "sns:Publish"
        Resource  = aws_sns_topic.alarms.arn
        Condition = {
          StringEquals = { "aws:SourceAccount" = data.aws_caller_identity.current.account_id }
          ArnLike      = { "aws:SourceArn" = "arn:${data.aws_partition.current.partition}:cloudwatch:${var.region}:${data.aws_caller_identity.current.account_id}:alarm:${var.name_prefix}-*" }
        }
      },
    ]
  })
}

resource "aws_sns_topic_subscription" "email" {
  for_each  = toset(var.notification_emails)
  topic_arn = aws_sns_topic.alarms.arn
  protocol  = "email"
  endpoint  = each.value
}

locals {
  actions = [aws_sns_topic.alarms.arn]
  # Every alarm's description says what to run and where to read on (docs/operations.md, "What each
  # alarm means": one section per alarm, whose anchors these are). The command needs only credentials:
  # the region is here and the CLI finds every resource from the name prefix.
  recover = "AWS_REGION=${var.region} npm run recover --"
  prefix  = "--prefix ${var.name_prefix}"
  runbook = "${var.runbook_url}#"
}

# IteratorAge: how far the processor lags the stream. Lambda emits nothing while the stream is idle,
# so missing data is not breaching (docs/aws-semantics.md §6). The threshold is the environment's tolerance
# for stale tool-call state; a blocked shard shows here first.
resource "aws_cloudwatch_metric_alarm" "iterator_age" {
  alarm_name          = "${var.name_prefix}-processor-iterator-age"
  alarm_description   = "The processor lags the stream by more than ${var.iterator_age_ms} ms: a slow downstream or a blocked shard. Run: ${local.recover} status ${local.prefix}. Runbook: ${local.runbook}processor-iterator-age"
  namespace           = "AWS/Lambda"
  metric_name         = "IteratorAge"
  dimensions          = { FunctionName = var.stream_consumer.function_name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  threshold           = var.iterator_age_ms
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions
}

# Records the ESM gave up on without delivering them anywhere: data loss unless a destination got them.
resource "aws_cloudwatch_metric_alarm" "dropped_events" {
  alarm_name          = "${var.name_prefix}-processor-dropped-events"
  alarm_description   = "The processor's ESM dropped records (retries or record age exhausted, destination failed). Any is too many. Run: ${local.recover} triage ${local.prefix}. Runbook: ${local.runbook}processor-dropped-events"
  namespace           = "AWS/Lambda"
  metric_name         = "DroppedEventCount"
  dimensions          = { EventSourceMappingUUID = var.stream_consumer.esm_uuid }
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# Records sent to the failure queue are not in DroppedEventCount (§6), so they need their own alarm: each
# one is a record the processor could not apply, waiting for dlq-redrive and a person.
resource "aws_cloudwatch_metric_alarm" "destination_delivered" {
  alarm_name          = "${var.name_prefix}-processor-records-to-failure-queue"
  alarm_description   = "Records reached the on-failure destination: dlq-redrive re-reads them into the quarantine, to replay once the cause is fixed. Run: ${local.recover} triage ${local.prefix}. Runbook: ${local.runbook}processor-records-to-failure-queue"
  namespace           = "AWS/Lambda"
  metric_name         = "OnFailureDestinationDeliveredEventCount"
  dimensions          = { EventSourceMappingUUID = var.stream_consumer.esm_uuid }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# Records that the stream no longer held when dlq-redrive tried to re-read them: lost for good.
resource "aws_cloudwatch_metric_alarm" "records_lost" {
  alarm_name          = "${var.name_prefix}-records-lost"
  alarm_description   = "dlq-redrive found a failed range already trimmed from the stream: those records are lost; its error log names the range. Run: ${local.recover} triage ${local.prefix}. Runbook: ${local.runbook}records-lost"
  namespace           = var.metrics_namespace
  metric_name         = "RecordsLost"
  dimensions          = { service = "dlq-redrive" }
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# Every DLQ (and the failure queue's): a message there needs a person, so one is enough.
resource "aws_cloudwatch_metric_alarm" "dlq_visible" {
  for_each            = var.dead_letter_queues
  alarm_name          = "${var.name_prefix}-${each.key}-dlq-messages"
  alarm_description   = "Messages in ${each.value}: each has failed for good or ran out of receives. Run: ${local.recover} triage ${local.prefix}. Runbook: ${local.runbook}dlq-messages"
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateNumberOfMessagesVisible"
  dimensions          = { QueueName = each.value }
  statistic           = "Maximum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
  ok_actions          = local.actions
}

# A DLQ message that nobody redrives ages towards its retention: page before it expires.
resource "aws_cloudwatch_metric_alarm" "dlq_age" {
  for_each            = var.dead_letter_queues
  alarm_name          = "${var.name_prefix}-${each.key}-dlq-age"
  alarm_description   = "The oldest message in ${each.value} is older than ${var.dlq_oldest_message_age_seconds} s: it expires at the DLQ's retention. Run: ${local.recover} peek --queue ${each.key} ${local.prefix}. Runbook: ${local.runbook}dlq-age"
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateAgeOfOldestMessage"
  dimensions          = { QueueName = each.value }
  statistic           = "Maximum"
  period              = 300
  evaluation_periods  = 1
  threshold           = var.dlq_oldest_message_age_seconds
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# The source queues: a backlog that keeps ageing means the workers are not keeping up or are failing.
resource "aws_cloudwatch_metric_alarm" "queue_age" {
  for_each            = var.source_queues
  alarm_name          = "${var.name_prefix}-${each.key}-queue-age"
  alarm_description   = "The oldest message in ${each.value.name} waits longer than ${each.value.max_age_seconds} s: the worker is failing or not keeping up. Run: ${local.recover} status ${local.prefix}. Runbook: ${local.runbook}queue-age"
  namespace           = "AWS/SQS"
  metric_name         = "ApproximateAgeOfOldestMessage"
  dimensions          = { QueueName = each.value.name }
  statistic           = "Maximum"
  period              = 60
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  threshold           = each.value.max_age_seconds
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# Errors include timeouts. With partial batch responses the handlers report failures instead of
# throwing, so an error is a crash, a bad configuration or a timeout: alarm on any in 5 minutes.
resource "aws_cloudwatch_metric_alarm" "errors" {
  for_each            = var.functions
  alarm_name          = "${var.name_prefix}-${each.key}-errors"
  alarm_description   = "${each.value.name} failed invocations (crash, ConfigError, timeout). Run: ${local.recover} status ${local.prefix}. Runbook: ${local.runbook}function-errors"
  namespace           = "AWS/Lambda"
  metric_name         = "Errors"
  dimensions          = { FunctionName = each.value.name }
  statistic           = "Sum"
  period              = 300
  evaluation_periods  = 1
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# Throttles return SQS messages to the queue and use up receives (§2.3): sustained throttling sends
# good messages to the DLQ. Alarm when it lasts.
resource "aws_cloudwatch_metric_alarm" "throttles" {
  for_each            = var.functions
  alarm_name          = "${var.name_prefix}-${each.key}-throttles"
  alarm_description   = "${each.value.name} is throttled: raise reserved concurrency or lower the ESM's maximum concurrency. Run: ${local.recover} status ${local.prefix}. Runbook: ${local.runbook}function-throttles"
  namespace           = "AWS/Lambda"
  metric_name         = "Throttles"
  dimensions          = { FunctionName = each.value.name }
  statistic           = "Sum"
  period              = 60
  evaluation_periods  = 5
  datapoints_to_alarm = 3
  threshold           = 0
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

# Duration near the timeout: the deadline margin is being eaten; the next slow downstream becomes
# timeouts. p99 over a fraction of the timeout.
resource "aws_cloudwatch_metric_alarm" "duration" {
  for_each            = var.functions
  alarm_name          = "${var.name_prefix}-${each.key}-duration-near-timeout"
  alarm_description   = "${each.value.name} p99 duration above ${var.duration_timeout_ratio * 100}% of its ${each.value.timeout_seconds} s timeout. Run: ${local.recover} status ${local.prefix}. Runbook: ${local.runbook}function-duration-near-timeout"
  namespace           = "AWS/Lambda"
  metric_name         = "Duration"
  dimensions          = { FunctionName = each.value.name }
  extended_statistic  = "p99"
  period              = 300
  evaluation_periods  = 2
  threshold           = each.value.timeout_seconds * 1000 * var.duration_timeout_ratio
  comparison_operator = "GreaterThanThreshold"
  treat_missing_data  = "notBreaching"
  alarm_actions       = local.actions
}

resource "aws_cloudwatch_dashboard" "this" {
  dashboard_name = "${var.name_prefix}-pipeline"
  dashboard_body = jsonencode({
    widgets = concat(
      [
        {
          type = "metric", width = 12, height = 6,
          properties = {
            title   = "Processor iterator age (ms)", region = var.region, stat = "Maximum", period = 60,
            metrics = [["AWS/Lambda", "IteratorAge", "FunctionName", var.stream_consumer.function_name]]
          }
        },
        {
          type = "metric", width = 12, height = 6,
          properties = {
            title = "Processor ESM: dropped and sent to the failure queue", region = var.region, stat = "Sum", period = 60,
            metrics = [
              ["AWS/Lambda", "DroppedEventCount", "EventSourceMappingUUID", var.stream_consumer.esm_uuid],
              ["AWS/Lambda", "OnFailureDestinationDeliveredEventCount", "EventSourceMappingUUID", var.stream_consumer.esm_uuid],
            ]
          }
        },
        {
          type = "metric", width = 12, height = 6,
          properties = {
            title   = "DLQ messages", region = var.region, stat = "Maximum", period = 300,
            metrics = [for k, q in var.dead_letter_queues : ["AWS/SQS", "ApproximateNumberOfMessagesVisible", "QueueName", q]]
          }
        },
      ],
      [for k, f in var.functions : {
        type = "metric", width = 12, height = 6,
        properties = {
          title = "${f.name}: invocations, errors, throttles", region = var.region, stat = "Sum", period = 60,
          metrics = [
            ["AWS/Lambda", "Invocations", "FunctionName", f.name],
            ["AWS/Lambda", "Errors", "FunctionName", f.name],
            ["AWS/Lambda", "Throttles", "FunctionName", f.name],
          ]
        }
      }],
    )
  })
}
