#!/usr/bin/env bash
# Installs the Python tools of .ci/python-tools.txt (cloudsplaining, zizmor; pinned) into a virtualenv in
# the CI tools cache, keyed by that file's content, and prints the virtualenv's bin directory on the last
# line. A second call with the same file does nothing.
#
# Usage: .ci/python-tools.sh            (CI_TOOLS_DIR overrides the cache directory)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
REQUIREMENTS="$here/python-tools.txt"
TOOLS="${CI_TOOLS_DIR:-$HOME/.cache/mcp-event-pipelines-ci}"
key="$(sed 's/#.*//' "$REQUIREMENTS" | awk NF | sha256sum | cut -c1-12)"
VENV="$TOOLS/python-tools-$key"
if [ ! -x "$VENV/bin/cloudsplaining" ] || [ ! -x "$VENV/bin/zizmor" ] || [ ! -f "$VENV/.installed" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS" >&2
  touch "$VENV/.installed"
fi
echo "$VENV/bin"
