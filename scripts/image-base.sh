#!/usr/bin/env bash
# Makes the base image the Containerfile builds on when no container registry is reachable: Debian
# bookworm (debootstrap, minbase, from the mirror apt already uses) with this machine's node and npm at
# the places the public node image has them (/usr/local/bin, /usr/local/lib/node_modules/npm).
# The machine's extra TLS trust for node (NODE_EXTRA_CA_CERTS: the registry may be reached through a
# proxy with its own CA) comes along with its node. Imported into buildah's storage as $1 (default
# localhost/bootorch-base:bookworm-node20), once: an existing image of that name is kept. Needs root,
# debootstrap and buildah.
set -euo pipefail
name=${1:-localhost/bootorch-base:bookworm-node20}
if buildah inspect --type image "$name" >/dev/null 2>&1; then
  echo "$name"
  exit 0
fi
mirror=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/*.sources 2>/dev/null || true)
[ -n "$mirror" ] || mirror=$(awk '/^deb / { print $2; exit }' /etc/apt/sources.list)
node_bin=$(readlink -f "$(command -v node)")
npm_dir=$(dirname "$(dirname "$(readlink -f "$(command -v npm)")")")
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase --include=ca-certificates bookworm "$root" "$mirror" >"$root.log" 2>&1 || {
  tail -20 "$root.log" >&2
  exit 1
}
rm -f "$root.log"
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
install -D -m 0755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
# The trust node has here: NODE_EXTRA_CA_CERTS, else npm's cafile, else the local CAs.
ca=() extra=${NODE_EXTRA_CA_CERTS:-}
[ -f "$extra" ] || extra=$(npm config get cafile 2>/dev/null || true)
if [ ! -f "$extra" ] && compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
  extra=$root.ca && cat /usr/local/share/ca-certificates/*.crt >"$extra"
fi
if [ -f "$extra" ]; then
  install -D -m 0644 "$extra" "$root/usr/local/share/bootorch-base/extra-ca.crt"
  ca=(--env NODE_EXTRA_CA_CERTS=/usr/local/share/bootorch-base/extra-ca.crt)
fi
rm -f "$root.ca"
ctr=$(buildah from scratch)
buildah copy --quiet "$ctr" "$root" / >/dev/null
buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "${ca[@]}" --cmd node "$ctr"
buildah commit --quiet --rm "$ctr" "$name" >/dev/null
echo "$name"
