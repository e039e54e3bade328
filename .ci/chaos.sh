#!/usr/bin/env bash
# The chaos run of every CI run (issue 27, item 3): the whole local pipeline under injected faults, judged by
# its witnesses (local/chaos/README.md), on a seed derived from the commit, so that each submission is proven
# on a seed nobody chose. Prints the seed, the verdict table and how to run the same again; a run that fails a
# check, or does not finish in time, fails CI.
#
# Usage: .ci/chaos.sh   (after npm ci; builds the zips when they are stale, as npm run chaos does)
#   CI_CHAOS_EVENTS   events put into the stream (default 10000). The issue's goal is 100000; at today's speed
#                     that run takes 44-54 minutes here (docs/benchmarks/ceiling.md), which CI's 90 minutes
#                     cannot hold beside the rest, so CI runs 10000 (6-7 minutes) until the proof is faster.
#   CI_CHAOS_TIMEOUT  seconds before the run gives up, saying what was still in flight (default 1800)
set -euo pipefail
cd "$(dirname "$0")/.."
commit="$(git rev-parse HEAD)"
# The first eight hex digits of the commit: a whole number below 2^32, the range --seed takes.
seed="$((16#${commit:0:8}))"
events="${CI_CHAOS_EVENTS:-10000}"
timeout="${CI_CHAOS_TIMEOUT:-1800}"
mkdir -p .tmp
echo "chaos: seed $seed (commit ${commit:0:12}), $events events, timeout $timeout s"
status=0
npm run chaos --silent -- --events "$events" --seed "$seed" --timeout "$timeout" \
  --diagnostics .tmp/ci-chaos-diagnostics.json || status=$?
again="npm run chaos -- --events $events --seed $seed --diagnostics .tmp/chaos-$seed.json"
case "$status" in
  0) echo "chaos: every check passed on seed $seed" ;;
  3) echo "chaos: out of time after $timeout s with no check failed (not a loss: the run above says what was still in flight); run the same again: $again" >&2 ;;
  *) echo "chaos: FAILED (exit $status) on seed $seed; run the same again: $again; each rerun's cause: npm run chaos -- --explain JOB_ID --from .tmp/ci-chaos-diagnostics.json" >&2 ;;
esac
exit "$status"
