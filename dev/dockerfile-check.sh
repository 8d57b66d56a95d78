#!/usr/bin/env bash
# Builds the Dockerfile with buildah on a machine that cannot reach Docker Hub: a stand-in for node:20-bookworm(-slim)
# is assembled from Debian's packages (debootstrap minbase) plus this machine's Node 20 and npm, tagged under the
# names the Dockerfile uses, and the build runs with --pull-never. Then the image's controller is started once (it must
# load every module, the Temporal SDK's native one included, and stop at "no kubeconfig").
# Needs root and `apt-get install buildah crun debootstrap`. Cached in ~/.cache/tidal/oci-base. Not part of `npm test`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${HOME}/.cache/tidal/oci-base
B=(buildah --storage-driver vfs)
mkdir -p "$cache"
if ! "${B[@]}" inspect --type image docker.io/library/node:20-bookworm >/dev/null 2>&1; then
  rm -rf "$cache/rootfs"
  debootstrap --variant=minbase bookworm "$cache/rootfs" http://deb.debian.org/debian
  mkdir -p "$cache/rootfs/usr/local/bin" "$cache/rootfs/usr/local/lib" "$cache/rootfs/etc/ssl/certs"
  cp "$(command -v node)" "$cache/rootfs/usr/local/bin/node"
  cp -a "$(dirname "$(readlink -f "$(command -v npm)")")/../.." "$cache/rootfs/usr/local/lib/node_modules"
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$cache/rootfs/usr/local/bin/npm"
  # This machine reaches the npm registry through a proxy with its own CA; the real node image needs no such file.
  cp /etc/ssl/certs/ca-certificates.crt "$cache/rootfs/etc/ssl/certs/"
  rm -rf "$cache"/rootfs/var/cache/apt/archives/*.deb "$cache"/rootfs/var/lib/apt/lists/*
  ctr=$("${B[@]}" from scratch)
  "${B[@]}" copy "$ctr" "$cache/rootfs/" / >/dev/null
  "${B[@]}" config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt --cmd node "$ctr"
  "${B[@]}" commit -q "$ctr" docker.io/library/node:20-bookworm >/dev/null
  "${B[@]}" rm "$ctr" >/dev/null
  "${B[@]}" tag docker.io/library/node:20-bookworm docker.io/library/node:20-bookworm-slim
fi
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
git -C "$repo" archive HEAD | tar -x -C "$ctx"
"${B[@]}" bud --pull-never --isolation chroot --network host -t localhost/tidal/controller:check "$ctx"
"${B[@]}" images localhost/tidal/controller:check
ctr=$("${B[@]}" from --pull-never localhost/tidal/controller:check)
out=$("${B[@]}" run --isolation chroot "$ctr" -- node dist/controller.js 2>&1 || true)
"${B[@]}" rm "$ctr" >/dev/null
echo "$out" | head -1 | cut -c1-160
echo "$out" | grep -q 'no kubeconfig' && echo 'dockerfile-check: the image builds and its controller starts'
