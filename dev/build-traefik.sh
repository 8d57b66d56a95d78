#!/usr/bin/env bash
# Builds Traefik (the Knative ingress of the local stack) from the Go module proxy into
# ~/.cache/tidal/traefik-<version>/bin/traefik, once, and prints TRAEFIK=<path> on stdout.
# Traefik only builds as the main module (its go.mod's replace lines apply to nothing else), so its module source is
# copied to <dir>/src and built there, with three stand-ins from dev/traefik/ for what the proxy cannot give:
#   - lego's DNS-01 provider registry imports cloud SDKs the proxy refuses: lego is copied to <dir>/deps/lego with
#     that one file replaced by lego-dns-providers.go, which builds no DNS provider (ACME HTTP-01/TLS-ALPN-01 remain);
#   - go-http-auth (Traefik's basic/digest auth middlewares) comes from a fork the proxy refuses: go-http-auth/;
#   - Traefik's nested module pkg/config/dynamic/ext is left out of module zips: dynamic-ext/.
# and one overlay: the Knative provider sends traffic to ClusterIPs, which nothing answers on a node without
# kube-proxy, ignores rewriteHost and marks KIngresses Ready before they are routed; knative-overlay/ adds our Go files
# to its package (and one to cmd/traefik) and seven anchored edits hand the work to them (dev/traefik/README.md).
# The binary is rebuilt when this script or dev/traefik/ changes (their hash is kept next to it).
# Usage: dev/build-traefik.sh     TRAEFIK_VERSION=v3.7.x overrides the pinned version.
set -euo pipefail

# Latest v3.7.x on the proxy when pinned (`go list -m -json github.com/traefik/traefik/v3@v3.7`).
TRAEFIK_VERSION=${TRAEFIK_VERSION:-v3.7.13}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
STANDINS=$HERE/traefik
# shellcheck source=go-env.sh
source "$HERE/go-env.sh"

d=$CACHE/traefik-$TRAEFIK_VERSION
bin=$d/bin/traefik
# What the binary is built from besides the proxy's modules.
inputs=$( (cat "${BASH_SOURCE[0]}" && cd "$STANDINS" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha256sum | cut -d' ' -f1)
fresh() { [[ -x $bin && $(cat "$bin.inputs" 2>/dev/null) == "$inputs" ]]; }

# Applies one perl substitution (with /mg, so that it counts every match) to a file of the build tree, and fails unless
# it matched exactly once: a Traefik whose code moved must stop the build, not build without the edit.
edit_once() {
  local file=$1 what=$2 subst=$3
  perl -0777 -i -pe "my \$n = 0 + ($subst); die \"matched \$n times\\n\" unless \$n == 1" "$file" ||
    die "knative overlay: the anchor of '$what' in $file does not match exactly once"
}

# The Knative provider overlay (dev/traefik/README.md), run in the build tree: our files join the provider's package
# and cmd/traefik, then the edits make Traefik call them.
knative_overlay() {
  local k=pkg/provider/kubernetes/knative f
  for f in "$STANDINS"/knative-overlay/*.go; do
    [[ ! -e $k/${f##*/} ]] || die "knative overlay: Traefik has a file $k/${f##*/} of its own"
    cp "$f" "$k/"
  done
  for f in "$STANDINS"/knative-overlay/cmd/*.go; do
    [[ ! -e cmd/traefik/${f##*/} ]] || die "knative overlay: Traefik has a file cmd/traefik/${f##*/} of its own"
    cp "$f" cmd/traefik/
  done
  # The provider keeps what it built per KIngress, for the status.
  edit_once $k/kubernetes.go 'status bookkeeping field' \
    's/^\tlastConfiguration safe\.Safe\n/$&\toverlay           overlayState\n/mg'
  # Ours take over by name: routers with rewriteHost and a record of failures; servers from EndpointSlices.
  edit_once $k/kubernetes.go 'buildRouters handed over' \
    's/^func \(p \*Provider\) buildRouters\(/func (p *Provider) upstreamBuildRouters(/mg'
  edit_once $k/kubernetes.go 'buildServers handed over' \
    's/^func \(p \*Provider\) buildServers\(/func (p *Provider) upstreamBuildServers(/mg'
  # Status writes leave the provider loop: it publishes what it built; our writer writes once Traefik serves it.
  edit_once $k/kubernetes.go 'status loop' \
    's/^(\t+)for _, ingress := range ingressStatuses \{\n\t+if err := p\.updateKnativeIngressStatus\(ctxLog, ingress\); err != nil \{\n[^\n]*\n\t+\}\n\t+\}\n/$1p.publishStatuses(ingressStatuses)\n/mg'
  edit_once $k/kubernetes.go 'status writer start' \
    's/^\tpool\.GoCtx\(func\(ctxPool context\.Context\) \{\n\t\toperation := func\(\) error \{\n/\tp.startStatusWriter(ctxLog, pool)\n\n$&/mg'
  # EndpointSlice events rebuild the configuration like the other informers' events.
  edit_once $k/client.go 'EndpointSlice informer' \
    's/^(\t+)_, err = factoryKube\.Core\(\)\.V1\(\)\.Secrets\(\)\.Informer\(\)\.AddEventHandler\(eventHandler\)\n\t+if err != nil \{\n\t+return nil, err\n\t+\}\n/$&$1if err = watchEndpointSlices(factoryKube, eventHandler); err != nil {\n$1\treturn nil, err\n$1}\n/mg'
  # Told after the router switch, the provider knows which configuration is live.
  edit_once cmd/traefik/traefik.go 'applied-configuration listener' \
    's/^(\t)watcher\.AddListener\(switchRouter\(routerFactory, serverEntryPointsTCP, serverEntryPointsUDP\)\)\n/$&$1watcher.AddListener(knativeConfigurationApplied)\n/mg'
}

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

    knative_overlay

    go build -trimpath -ldflags "-s -w -X github.com/traefik/traefik/v3/pkg/version.Version=$TRAEFIK_VERSION \
      -X github.com/traefik/traefik/v3/pkg/version.BuildDate=${date:-unknown}" -o "$bin.tmp" ./cmd/traefik
  )
  mv "$bin.tmp" "$bin"
  [[ $("$bin" version) == *"Version:"*"$TRAEFIK_VERSION"* ]] || die "$bin does not report version $TRAEFIK_VERSION"
  echo "$inputs" >"$bin.inputs"
  say "traefik $TRAEFIK_VERSION: built in $(($(date +%s) - start))s"
}

if ! fresh; then
  mkdir -p "$CACHE"
  # One build at a time: a second caller waits for the first, then finds the binary.
  exec 9>"$CACHE/.traefik.lock"
  if ! flock -n 9; then say "another traefik build is running; waiting for it"; flock 9; fi
  if fresh; then say "traefik $TRAEFIK_VERSION: built by the other caller"; else build; fi
else
  say "traefik $TRAEFIK_VERSION: cached in $d/bin"
fi
echo "TRAEFIK=$bin"
