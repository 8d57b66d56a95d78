#!/usr/bin/env bash
# Builds Traefik (the Knative ingress of the local stack) from the Go module proxy into
# ~/.cache/tidal/traefik-<version>/bin/traefik, once, and prints TRAEFIK=<path> on stdout.
# Traefik only builds as the main module (its go.mod's replace lines apply to nothing else), so its module source is
# copied to <dir>/src and built there, with three stand-ins from dev/traefik/ for what the proxy cannot give:
#   - lego's DNS-01 provider registry imports cloud SDKs the proxy refuses: lego is copied to <dir>/deps/lego with
#     that one file replaced by lego-dns-providers.go, which builds no DNS provider (ACME HTTP-01/TLS-ALPN-01 remain);
#   - go-http-auth (Traefik's basic/digest auth middlewares) comes from a fork the proxy refuses: go-http-auth/;
#   - Traefik's nested module pkg/config/dynamic/ext is left out of module zips: dynamic-ext/.
# Usage: dev/build-traefik.sh     TRAEFIK_VERSION=v3.7.x overrides the pinned version.
set -euo pipefail

# Latest v3.7.x on the proxy when pinned (`go list -m -json github.com/traefik/traefik/v3@v3.7`).
TRAEFIK_VERSION=${TRAEFIK_VERSION:-v3.7.13}
CACHE=${TIDAL_CACHE:-$HOME/.cache/tidal}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STANDINS=$HERE/traefik

export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
export GOMODCACHE=${GOMODCACHE:-$CACHE/go/mod} GOCACHE=${GOCACHE:-$CACHE/go/build}

say() { printf '[toolchain] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

[[ -x /usr/local/go/bin/go ]] && ! command -v go >/dev/null 2>&1 && export PATH=/usr/local/go/bin:$PATH

d=$CACHE/traefik-$TRAEFIK_VERSION
bin=$d/bin/traefik

build() {
  command -v go >/dev/null 2>&1 || die "'go' is not on PATH. Install Go 1.26 (e.g. /usr/local/go/bin)."
  command -v jq >/dev/null 2>&1 || die "'jq' is not on PATH (apt-get install -y jq)."
  local start; start=$(date +%s)
  say "traefik $TRAEFIK_VERSION: building (cold: ~11 min on 2 cores with an empty Go cache, ~30 s when only the binary is missing)"
  # A fresh tree each time: an interrupted build may have left a half-edited copy.
  rm -rf "$d/src" "$d/deps"
  mkdir -p "$d/src" "$d/deps" "$d/bin"

  local info dir date
  info=$(cd "$CACHE" && go mod download -json "github.com/traefik/traefik/v3@$TRAEFIK_VERSION") ||
    die "cannot download github.com/traefik/traefik/v3@$TRAEFIK_VERSION: $(jq -r '.Error // empty' <<<"$info")"
  dir=$(jq -r .Dir <<<"$info")
  date=$(cd "$CACHE" && go list -m -f '{{if .Time}}{{.Time.Format "2006-01-02T15:04:05Z"}}{{end}}' "github.com/traefik/traefik/v3@$TRAEFIK_VERSION")
  cp -R "$dir/." "$d/src/"
  chmod -R u+w "$d/src"

  (
    cd "$d/src"
    # The nested ext module: fill the directory Traefik's own replace line points at.
    local ext
    ext=$(go mod edit -json | jq -r '.Replace[]? | select(.Old.Path == "github.com/traefik/traefik/dynamic/ext") | .New.Path')
    if [[ -n $ext && ! -e $ext/go.mod ]]; then
      mkdir -p "$ext"
      cp "$STANDINS/dynamic-ext/go.mod" "$STANDINS/dynamic-ext/ext.go" "$ext/"
    fi

    # go-http-auth: Traefik imports github.com/abbot/go-http-auth and replaces it with a fork; ours replaces both.
    cp -R "$STANDINS/go-http-auth" "$d/deps/go-http-auth"
    rm -f "$d/deps/go-http-auth/"*_test.go
    go mod edit -replace=github.com/abbot/go-http-auth=../deps/go-http-auth

    # lego: a private copy of the version Traefik selects, with our provider registry in place of the generated one.
    local lego legodir
    lego=$(go mod edit -json | jq -r '.Require[] | select(.Path | test("^github.com/go-acme/lego/v[0-9]+$")) | .Path' | sort -V | tail -1)
    [[ $lego == github.com/go-acme/lego/v5 ]] || die "expected Traefik to use github.com/go-acme/lego/v5, found '${lego:-none}'"
    legodir=$(go mod download -json "$lego" | jq -r .Dir)
    [[ -f $legodir/providers/dns/zz_gen_dns_providers.go ]] || die "$lego has no providers/dns/zz_gen_dns_providers.go to stand in for"
    cp -R "$legodir/." "$d/deps/lego"
    chmod -R u+w "$d/deps/lego"
    cp "$STANDINS/lego-dns-providers.go" "$d/deps/lego/providers/dns/zz_gen_dns_providers.go"
    go mod edit -replace="$lego=../deps/lego"

    go build -trimpath -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION \
      -X github.com/traefik/traefik/v3/pkg/version.BuildDate=${date:-unknown}" -o "$bin.tmp" ./cmd/traefik
  )
  mv "$bin.tmp" "$bin"
  [[ $("$bin" version) == *"Version:"*"$TRAEFIK_VERSION"* ]] || die "$bin does not report version $TRAEFIK_VERSION"
  say "traefik $TRAEFIK_VERSION: built in $(($(date +%s) - start))s"
}

if [[ ! -x $bin ]]; then
  mkdir -p "$CACHE"
  # One build at a time: a second caller waits for the first, then finds the binary.
  exec 9>"$CACHE/.traefik.lock"
  if ! flock -n 9; then say "another traefik build is running; waiting for it"; flock 9; fi
  if [[ -x $bin ]]; then say "traefik $TRAEFIK_VERSION: built by the other caller"; else build; fi
else
  say "traefik $TRAEFIK_VERSION: cached in $d/bin"
fi
echo "TRAEFIK=$bin"
