provider "aws" {
  region = var.region
}

locals {
  # `npm run build` writes dist/manifest.json: per function its zip's path, SHA-256, handler and runtime.
  manifest = jsondecode(file("${var.repository_root}/dist/manifest.json"))
  built    = local.manifest.artifacts["processor"]
}

module "table" {
  source = "../../../table"

  name     = "example-tool-calls"
  hash_key = "callId"
}

data "aws_caller_identity" "current" {}

module "quarantine" {
  source = "../../../bucket"

  name = "example-quarantine-${data.aws_caller_identity.current.account_id}"
  # The only copy of failed records: nothing expires, nobody deletes, no write replaces an object.
  protection = {}
}

# The processor's zip, with the two resources its configuration requires (functions/processor/README.md);
# its event source mapping is the kinesis-esm module's (see its example).
module "function" {
  source = "../.."

  name = "example-processor"
  artifact = {
    path    = abspath("${var.repository_root}/${local.built.path}")
    sha256  = local.built.sha256
    handler = local.built.handler
    runtime = local.built.runtime
  }
  timeout_seconds    = 60
  memory_mb          = 512
  log_retention_days = 14
  environment = {
    TOOL_CALLS_TABLE  = module.table.name
    QUARANTINE_BUCKET = module.quarantine.name
  }
  # Every action on a named resource: the module refuses wildcards.
  policy_statements = [
    {
      sid       = "ReadWriteCalls"
      actions   = ["dynamodb:BatchGetItem", "dynamodb:GetItem", "dynamodb:PutItem"]
      resources = [module.table.arn]
    },
    {
      sid       = "WriteQuarantine"
      actions   = ["s3:PutObject"]
      resources = ["${module.quarantine.arn}/kinesis/*"]
    },
  ]
}
