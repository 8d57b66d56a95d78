#!/usr/bin/env bash
# Builds cert-manager's controller (the real issuer behind the certificate class
# cert-manager.certificate.networking.knative.dev on the local stacks) from the Go module proxy into
# ~/.cache/tidal/cert-manager-<version>/bin/cert-manager, once, and prints CERT_MANAGER=<path> and
# CERT_MANAGER_CRDS=<dir> (the module's own CRDs) on stdout. The proxy serves github.com/cert-manager/cert-manager but
# not its cmd/controller module, so dev/cert-manager/ is our own main wiring its library packages (its README says
# which). The binary is rebuilt when this script or dev/cert-manager/ changes (their hash is kept next to it).
# Usage: dev/build-cert-manager.sh     CERT_MANAGER_VERSION=v1.21.x overrides the pinned version.
set -euo pipefail

CERT_MANAGER_VERSION=${CERT_MANAGER_VERSION:-v1.21.2}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SRC=$HERE/cert-manager
# shellcheck source=go-env.sh
source "$HERE/go-env.sh"

d=$CACHE/cert-manager-$CERT_MANAGER_VERSION
bin=$d/bin/cert-manager
inputs=$( (cat "${BASH_SOURCE[0]}" && echo "$CERT_MANAGER_VERSION" && cd "$SRC" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)
fresh() { [[ -x $bin && $(cat "$bin.inputs" 2>/dev/null) == "$inputs" ]]; }

build() {
  command -v go >/dev/null 2>&1 || die "'go' is not on PATH. Install Go 1.26 (e.g. /usr/local/go/bin)."
  local start; start=$(date +%s)
  say "cert-manager $CERT_MANAGER_VERSION: building (cold: several minutes on 2 cores)"
  rm -rf "$d/src"
  mkdir -p "$d/src" "$d/bin"
  cp "$SRC"/*.go "$SRC/go.mod" "$d/src/"
  (
    cd "$d/src"
    go mod edit -require="github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION"
    go mod tidy
    go build -trimpath -ldflags "-s -w" -o "$bin.tmp" .
  )
  mv "$bin.tmp" "$bin"
  echo "$inputs" >"$bin.inputs"
  say "cert-manager $CERT_MANAGER_VERSION: built in $(($(date +%s) - start))s"
}

if ! fresh; then
  mkdir -p "$CACHE"
  # One build at a time: a second caller waits for the first, then finds the binary.
  exec 9>"$CACHE/.cert-manager.lock"
  if ! flock -n 9; then say "another cert-manager build is running; waiting for it"; flock 9; fi
  if fresh; then say "cert-manager $CERT_MANAGER_VERSION: built by the other caller"; else build; fi
else
  say "cert-manager $CERT_MANAGER_VERSION: cached in $d/bin"
fi
crds=$(cd "$CACHE" && go mod download -json "github.com/cert-manager/cert-manager@$CERT_MANAGER_VERSION" | jq -r .Dir)/deploy/crds
[[ -f $crds/cert-manager.io_certificates.yaml ]] || die "no CRDs in $crds"
echo "CERT_MANAGER=$bin"
echo "CERT_MANAGER_CRDS=$crds"
