#!/usr/bin/env bash
# Installs the AWS CLI v1 (PyPI `awscli`, Apache-2.0) into a virtualenv in the CI tools cache, pinned,
# and prints the path of its `aws` executable on the last line. A second call with the same version does
# nothing; concurrent calls (test files running in parallel) wait for each other on a lock. Used by the
# tests that run the documented `aws ...` commands against `npm start -- --serve`.
#
# Usage: .ci/awscli.sh          (AWSCLI_VERSION and CI_TOOLS_DIR override the defaults)
set -euo pipefail
VERSION="${AWSCLI_VERSION:-1.46.2}"
TOOLS="${CI_TOOLS_DIR:-$HOME/.cache/mcp-event-pipelines-ci}"
VENV="$TOOLS/awscli-$VERSION"
mkdir -p "$TOOLS"
installed() { "$VENV/bin/aws" --version 2>&1 | grep -q "^aws-cli/$VERSION "; }
if ! installed; then
  exec 9>"$VENV.lock"
  flock 9
  # Another call may have installed it while this one waited for the lock.
  if ! installed; then
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install --quiet --disable-pip-version-check "awscli==$VERSION" >&2
  fi
fi
echo "$VENV/bin/aws"
