#!/usr/bin/env bash
# Installs moto's server (PyPI `moto[server]`, Apache-2.0) into a virtualenv in the CI tools cache,
# pinned, and prints the path of its `moto_server` executable on the last line. A second call with
# the same version does nothing. Used by the tests that must see AWS's answers where the embedded
# emulators answer differently, and by the Terraform check (npm run tf:check).
#
# Usage: .ci/moto.sh            (MOTO_VERSION and CI_TOOLS_DIR override the defaults)
set -euo pipefail
VERSION="${MOTO_VERSION:-5.2.5}"
TOOLS="${CI_TOOLS_DIR:-$HOME/.cache/mcp-event-pipelines-ci}"
VENV="$TOOLS/moto-$VERSION"
if ! "$VENV/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$VERSION')" 2>/dev/null; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "moto[server]==$VERSION" >&2
fi
echo "$VENV/bin/moto_server"
