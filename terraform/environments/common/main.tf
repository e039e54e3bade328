provider "aws" {
  region = var.region
}

locals {
  # Absent before the first build: the pipeline module then refuses the plan with a clear message.
  manifest = jsondecode(try(file("${var.repository_root}/dist/manifest.json"), "{\"formatVersion\":1,\"artifacts\":{}}"))
}

# A thin root: every setting is in terraform.tfvars.json, every resource in modules/pipeline.
module "pipeline" {
  source = "../../modules/pipeline"

  environment         = var.environment
  region              = var.region
  name_prefix         = var.name_prefix
  stream              = var.stream
  processor           = var.processor
  tool_worker         = var.tool_worker
  fifo_worker         = var.fifo_worker
  dlq_redrive         = var.dlq_redrive
  alarms              = var.alarms
  notification_emails = var.notification_emails
  runbook_url         = var.runbook_url
  tags                = var.tags
  manifest            = local.manifest
  repository_root     = var.repository_root
}
