output "stream_name" {
  description = "The lifecycle stream."
  value       = module.stream.name
}

output "tool_calls_table" {
  description = "The tool-calls table."
  value       = module.tool_calls_table.name
}

output "quarantine_bucket" {
  description = "The quarantine bucket."
  value       = module.quarantine_bucket.name

  # The break-glass role is exempt from the quarantine's protection; a role GitHub workflows assume
  # (terraform/bootstrap's mcp-<env>-deploy and -plan, of any environment) would hand that to any merged
  # change. lint:config's break-glass-is-a-workflow-role says so before a deploy; this holds for an apply
  # that never ran it. (Here, not in var.quarantine's validations: those are generated from the settings
  # schema, and Terraform's RE2 has no negative lookahead to say it as a pattern.)
  precondition {
    condition     = var.quarantine.break_glass_role_name == null || !can(regex("^mcp-[a-z0-9]+-(deploy|plan)$", coalesce(var.quarantine.break_glass_role_name, "-")))
    error_message = "quarantine.break_glass_role_name names a role GitHub workflows assume (mcp-<env>-deploy or -plan): the break-glass role must be one only a person assumes, with MFA (docs/security.md, \"Breaking the glass\")."
  }
}

output "queue_urls" {
  description = "Source queues and DLQs."
  value = merge(
    { for key, q in module.queue : key => q.url },
    { for key, q in module.queue : "${key}_dlq" => q.dlq_url },
  )
}

output "alarm_topic_arn" {
  description = "Subscribe here to be paged."
  value       = module.alarms.topic_arn
}

output "resource_names" {
  description = "The name of every resource, as @mcp-pipeline/settings' resourceNames() derives them from resource-names.json (buckets with the account id)."
  value = {
    stream            = module.stream.name
    stream_consumer   = var.processor.esm.enhanced_fan_out ? "${local.p}-${local.names.stream_consumer}" : null
    tool_calls_table  = module.tool_calls_table.name
    dedupe_table      = module.dedupe_table.name
    quarantine_bucket = module.quarantine_bucket.name
    results_bucket    = module.results_bucket.name
    functions = merge(
      { processor = module.processor.name },
      { for key, f in module.sqs_consumer : key => f.name },
    )
    queues = { for key, q in module.queue : key => { name = q.name, dlq_name = q.dlq_name } }
  }
}
