output "topic_arn" {
  description = "The SNS topic every alarm notifies."
  value       = aws_sns_topic.alarms.arn
}

output "topic_key_arn" {
  description = "The customer-managed KMS key of the alarm topic (its policy lets CloudWatch alarms publish)."
  value       = aws_kms_key.alarms.arn
}

output "alarm_names" {
  description = "Every alarm's name."
  value = concat(
    [
      aws_cloudwatch_metric_alarm.iterator_age.alarm_name,
      aws_cloudwatch_metric_alarm.dropped_events.alarm_name,
      aws_cloudwatch_metric_alarm.destination_delivered.alarm_name,
      aws_cloudwatch_metric_alarm.records_lost.alarm_name,
    ],
    [for a in aws_cloudwatch_metric_alarm.dlq_visible : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.dlq_age : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.queue_age : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.errors : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.throttles : a.alarm_name],
    [for a in aws_cloudwatch_metric_alarm.duration : a.alarm_name],
  )
}
