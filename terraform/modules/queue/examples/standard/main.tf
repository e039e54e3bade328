provider "aws" {
  region = var.region
}

# A standard queue and its DLQ (jobs-dlq): after 5 receives SQS moves a message to the DLQ, which keeps it
# 14 days, longer than the source's 4 days.
module "jobs" {
  source = "../.."

  name                       = "example-jobs"
  visibility_timeout_seconds = 180 # >= 6 x a 30 s consumer timeout (docs/aws-semantics.md §2.1)
  max_receive_count          = 5
}
