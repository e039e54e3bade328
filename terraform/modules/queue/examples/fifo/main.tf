provider "aws" {
  region = var.region
}

# A FIFO queue (example-session-jobs.fifo) and its FIFO DLQ (example-session-jobs-dlq.fifo): messages of
# one message group are delivered in order, and a group is blocked while one of its messages is in flight
# (docs/aws-semantics.md §3).
module "session_jobs" {
  source = "../.."

  name                       = "example-session-jobs"
  fifo                       = true
  visibility_timeout_seconds = 180
  max_receive_count          = 5
}
