#!/usr/bin/env bash
# Builds the image from the Containerfile with Debian's buildah, on the base scripts/image-base.sh
# makes (no container registry is reachable here), and prints its name ($1, default
# localhost/bootorch:ci). Chroot isolation: no namespaces or cgroups needed for the RUN steps.
set -euo pipefail
cd "$(dirname "$0")/.."
name=${1:-localhost/bootorch:ci}
base=$(scripts/image-base.sh)
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! buildah build --isolation chroot --layers --format docker -f Containerfile --build-arg "BASE=$base" -t "$name" . >"$log" 2>&1; then
  grep -v 'EBADENGINE' "$log" | tail -40 >&2
  exit 1
fi
echo "$name"
