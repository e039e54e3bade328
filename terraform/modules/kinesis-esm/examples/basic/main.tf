provider "aws" {
  region = var.region
}

module "stream" {
  source = "../../../stream"

  name = "example-events"
}

# Where the mapping sends an on-failure record (a pointer to the records it gave up on, §1.6): a standard
# queue, which a function such as dlq-redrive consumes.
module "failure_queue" {
  source = "../../../queue"

  name                       = "example-stream-failures"
  visibility_timeout_seconds = 360
}

# The mapping on an existing function, whose role may read the stream and send to the failure queue.
module "esm" {
  source = "../.."

  function_name              = var.function_name
  event_source_arn           = module.stream.event_source_arn
  parallelization_factor     = 2
  maximum_retry_attempts     = 3
  on_failure_destination_arn = module.failure_queue.arn
}
