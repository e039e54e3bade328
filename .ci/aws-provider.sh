#!/usr/bin/env bash
# Builds the hashicorp/aws Terraform provider from the Go module proxy into a filesystem mirror
# outside the repository (the only way this machine reaches it: registry.terraform.io is not
# reachable), with only the AWS services that .ci/aws-provider-services.txt lists: the whole provider
# (~250 services) took 40-70 minutes and ~9 GB of memory on two cores for a 905 MB binary, which
# Terraform hashes on every init. tools/terraform/src/tf-check/provider-trim-cli.ts (run with the repository's tsx:
# npm ci first) rewrites the provider's generated list of service packages in a scratch copy of the source
# (never in the Go module cache) and writes beside the binary the manifest that `npm run tf:check` reads to
# name a missing service.
#
# Keyed by module version, provider version, the service list and the trim's source files (a stamp file in
# the mirror): a second call with the same key does nothing; a changed list builds again.
#
# The provider's go.mod has no /v6 suffix, so the proxy lists only v1.60.0; a commit resolves as a
# pseudo-version, which must be spelled out in full: the proxy answers 403 for the bare commit
# (5f2286d6d836, main just after v6.47.0; its version file says 6.47.1).
# With our 12 services, from empty Go caches (nice -n 10, on two cores shared with other jobs): 6 min 40 s
# at load average 1.7-24.6, 17 min 52 s at 7-16; 3.7 GB at most for all its processes; a 115 MB binary
# (docs/deploy.md).
#
# Usage: .ci/aws-provider.sh [MIRROR_DIR]   prints the mirror directory on its last line.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
MODULE_VERSION="${AWS_PROVIDER_MODULE_VERSION:-v1.60.1-0.20260602190131-5f2286d6d836}"
VERSION="${AWS_PROVIDER_VERSION:-6.47.1}"
SERVICES_FILE="$here/aws-provider-services.txt"
TRIM="$root/tools/terraform/src/tf-check/provider-trim-cli.ts"
# What the trim's output depends on, for the cache key (.github/workflows/ci.yml's hashFiles names the same).
TRIM_SOURCES=("$TRIM" "$root/tools/terraform/src/tf-check/provider-trim.ts" "$root/tools/terraform/src/tf-check/service-list.ts")
# The repository's Node (its `node` devDependency) and tsx, as `npm run` would find them.
NODE_BIN="$root/node_modules/.bin"
MIRROR="${1:-${CI_TOOLS_DIR:-$HOME/.cache/mcp-event-pipelines-ci}/terraform-mirror}"
# Absolute: the build writes its output from inside the source copy, and Terraform's CLI configuration
# needs the path that this prints on its last line.
mkdir -p "$MIRROR"
MIRROR="$(cd "$MIRROR" && pwd)"
PLATFORM="$(go env GOOS)_$(go env GOARCH)"
DEST="$MIRROR/registry.terraform.io/hashicorp/aws/$VERSION/$PLATFORM"
BIN="$DEST/terraform-provider-aws_v$VERSION"
# Beside the registry.terraform.io tree, where Terraform's mirror scan ignores them (a file inside the
# platform directory would be part of the provider package and of its hash).
MANIFEST="$MIRROR/aws-provider-services.json"
STAMP="$MIRROR/aws-provider.key"

# The services without comments or blank lines, so that editing a comment does not rebuild.
services="$(sed 's/#.*//' "$SERVICES_FILE" | tr -d ' \t' | awk NF | sort -u)"
key="$({ echo "$MODULE_VERSION $VERSION $PLATFORM"; echo "$services"; cat "${TRIM_SOURCES[@]}"; } | sha256sum | cut -c1-16)"

if [ -x "$BIN" ] && [ -f "$MANIFEST" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$key" ]; then
  echo "hashicorp/aws $VERSION already built for key $key ($(echo $services)): $BIN" >&2
  echo "$MIRROR"
  exit 0
fi

if [ ! -x "$NODE_BIN/tsx" ]; then
  echo "no tsx in $NODE_BIN: run npm ci in $root first" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
echo "building hashicorp/aws $VERSION from $MODULE_VERSION with $(echo $services), key $key (7-18 minutes on two busy cores)" >&2
# go mod download prints its error inside the JSON: show it instead of dying silently under set -e.
if ! json="$(GOFLAGS=-mod=mod go mod download -json "github.com/hashicorp/terraform-provider-aws@$MODULE_VERSION")"; then
  printf '%s\n' "$json" >&2
  exit 1
fi
dir="$(printf '%s' "$json" | PATH="$NODE_BIN:$PATH" node -e '
  const { Dir } = JSON.parse(require("node:fs").readFileSync(0, "utf8"));
  if (typeof Dir !== "string") throw new Error("go mod download -json printed no Dir");
  console.log(Dir);
')"
cp -r "$dir/." "$work/src"
chmod -R u+w "$work/src"
PATH="$NODE_BIN:$PATH" tsx "$TRIM" "$work/src" "$SERVICES_FILE" "$work/manifest.json"
# A stale stamp must not outlive a failed build: the binary and manifest below replace the old ones.
rm -f "$STAMP"
mkdir -p "$DEST"
(
  cd "$work/src"
  # Two packages at a time by default (AWS_PROVIDER_BUILD_JOBS), as for the whole provider, where more
  # raised peak memory past ~9 GB.
  GOFLAGS=-mod=mod go build -p "${AWS_PROVIDER_BUILD_JOBS:-2}" -trimpath \
    -ldflags "-s -w -X github.com/hashicorp/terraform-provider-aws/version.ProviderVersion=$VERSION" \
    -o "$BIN.partial" .
)
mv "$BIN.partial" "$BIN"
mv "$work/manifest.json" "$MANIFEST"
echo "$key" >"$STAMP"
echo "built $BIN ($(du -h "$BIN" | cut -f1)) with $(echo $services)" >&2
echo "$MIRROR"
