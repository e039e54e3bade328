provider "aws" {
  region = var.region
}

data "aws_caller_identity" "current" {}

data "aws_partition" "current" {}

locals {
  # What terraform/bootstrap created for this environment, named from the same "mcp-<env>" that is this
  # environment's name_prefix (`npm run iam:check` fails if the two disagree): the permissions boundary
  # of every function role, and the deploy and plan roles that the alarm key's policy names.
  iam = "arn:${data.aws_partition.current.partition}:iam::${data.aws_caller_identity.current.account_id}"

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
  quarantine          = var.quarantine
  test_tools          = var.test_tools
  notification_emails = var.notification_emails
  runbook_url         = var.runbook_url
  tags                = var.tags
  manifest            = local.manifest
  repository_root     = var.repository_root

  function_permissions_boundary_arn = "${local.iam}:policy/${var.name_prefix}-function-boundary"
  alarm_key_administrator_arns      = ["${local.iam}:role/${var.name_prefix}-deploy"]
  alarm_key_reader_arns             = ["${local.iam}:role/${var.name_prefix}-plan"]
}
