#!/usr/bin/env bash
# Builds the hashicorp/aws Terraform provider from the Go module proxy into a filesystem mirror
# outside the repository (the only way this machine reaches it: registry.terraform.io is not
# reachable). Keyed by version: a second call with the same version does nothing.
#
# The provider's go.mod has no /v6 suffix, so the proxy lists only v1.60.0; a commit resolves as a
# pseudo-version, which must be spelled out in full: the proxy answers 403 for the bare commit
# (5f2286d6d836, main just after v6.47.0; its version file says 6.47.1).
# About 40 minutes and ~9 GB of memory on two cores; the binary is ~900 MB.
#
# Usage: .ci/aws-provider.sh [MIRROR_DIR]   prints the mirror directory on its last line.
set -euo pipefail

MODULE_VERSION="${AWS_PROVIDER_MODULE_VERSION:-v1.60.1-0.20260602190131-5f2286d6d836}"
VERSION="${AWS_PROVIDER_VERSION:-6.47.1}"
MIRROR="${1:-${CI_TOOLS_DIR:-$HOME/.cache/mcp-event-pipelines-ci}/terraform-mirror}"
# Absolute: the build writes its output from inside the source copy, and Terraform's CLI configuration
# needs the path that this prints on its last line.
mkdir -p "$MIRROR"
MIRROR="$(cd "$MIRROR" && pwd)"
PLATFORM="$(go env GOOS)_$(go env GOARCH)"
DEST="$MIRROR/registry.terraform.io/hashicorp/aws/$VERSION/$PLATFORM"
BIN="$DEST/terraform-provider-aws_v$VERSION"

if [ -x "$BIN" ]; then
  echo "hashicorp/aws $VERSION already built: $BIN" >&2
  echo "$MIRROR"
  exit 0
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "building hashicorp/aws $VERSION from $MODULE_VERSION (about 40 minutes on two cores)" >&2
# go mod download prints its error inside the JSON: show it instead of dying silently under set -e.
if ! json="$(GOFLAGS=-mod=mod go mod download -json "github.com/hashicorp/terraform-provider-aws@$MODULE_VERSION")"; then
  printf '%s\n' "$json" >&2
  exit 1
fi
dir="$(printf '%s' "$json" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Dir"])')"
cp -r "$dir/." "$work/src"
chmod -R u+w "$work/src"
mkdir -p "$DEST"
(
  cd "$work/src"
  # Two packages at a time by default (AWS_PROVIDER_BUILD_JOBS): more raises peak memory past ~9 GB.
  GOFLAGS=-mod=mod go build -p "${AWS_PROVIDER_BUILD_JOBS:-2}" -trimpath \
    -ldflags "-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=$VERSION" \
    -o "$BIN.partial" .
)
mv "$BIN.partial" "$BIN"
echo "built $BIN ($(du -h "$BIN" | cut -f1))" >&2
echo "$MIRROR"
