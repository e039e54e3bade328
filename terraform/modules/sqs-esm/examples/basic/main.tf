provider "aws" {
  region = var.region
}

module "jobs" {
  source = "../../../queue"

  name                       = "example-jobs"
  visibility_timeout_seconds = 180 # >= 6 x the function's timeout + batching window (§2.1)
}

# The mapping on an existing function, whose role may receive, delete and change the visibility of the
# queue's messages.
module "esm" {
  source = "../.."

  function_name       = var.function_name
  queue_arn           = module.jobs.arn
  batch_size          = 10
  maximum_concurrency = 10
}
