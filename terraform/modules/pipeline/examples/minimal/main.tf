provider "aws" {
  region = var.region
}

locals {
  # `npm run build` writes dist/manifest.json (per function: zip path, SHA-256, handler, runtime). Before the
  # first build the pipeline module refuses the plan with a clear message.
  manifest = jsondecode(try(file("${var.repository_root}/dist/manifest.json"), "{\"formatVersion\":1,\"artifacts\":{}}"))
}

# A whole environment, as terraform/environments/common does it: every setting comes from a
# terraform.tfvars.json, passed through unchanged; the module's variables.tf types and checks them.
module "pipeline" {
  source = "../.."

  environment     = var.environment
  region          = var.region
  name_prefix     = var.name_prefix
  stream          = var.stream
  processor       = var.processor
  tool_worker     = var.tool_worker
  fifo_worker     = var.fifo_worker
  dlq_redrive     = var.dlq_redrive
  alarms          = var.alarms
  manifest        = local.manifest
  repository_root = var.repository_root
}
