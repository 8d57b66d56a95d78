#!/usr/bin/env bash
# Builds Knative Serving from the Go module proxy, reusing what is there, into ~/.cache/tidal/knative-serving-<version>/:
#   bin/<image name>   static binaries packaged as OCI images by dev/knative-images.ts: queue-proxy (cmd/queue, image
#                      `queue`), every test image of the conformance and e2e tests (each main package under
#                      test/test_images/), and upstream's own control plane (cmd/controller, webhook, activator,
#                      autoscaler), which the conformance run deploys to compare against
#   tests/<name>.test  the conformance suites, compiled with the e2e tag (`go test -c`): conformance-api-v1,
#                      conformance-runtime, and knative.dev/networking's KIngress conformance (ingress-conformance)
#   bin-networking/<image name>
#                      knative.dev/networking's test images (each main package under its test/test_images/), the
#                      KIngress suite's backends: kept apart since several share a name with serving's (runtime,
#                      grpc-ping, …) but are other programs; packages-networking.tsv lists them with role networking
#
# An image is named as ko names it with --base-import-paths, which upstream's test/upload-test-images.sh passes (-B)
# and the tests' image names (test/conformance.go: "servingcontainer", "grpc-ping", …) assume: the last element of the
# import path. A main package's kodata/ folder, if it has one, is copied to <cache>/kodata/<image name>/ (ko puts it
# at /var/run/ko). packages.tsv lists each image's name, import path and role (queue, test or serving).
#
# v0.51.0 pins knative.dev/pkg, networking, caching and hack at pseudo-versions whose module zips the proxy refuses
# (403 on 2026-12-06), so those four are replaced with the versions v0.50.0 pins (July 2026), which it serves;
# serving@v0.51.0's own source is unchanged and builds against them. OpenTelemetry goes back to v0.50.0's versions
# with them: that knative.dev/pkg names semconv v1.41.0's schema, OpenTelemetry v1.47's SDK v1.43.0's, and every
# binary that merges the two resources (queue-proxy first) exits with "conflicting Schema URL".
#
# Prints KNATIVE_SERVING_VERSION=, KNATIVE_BIN=, KNATIVE_KODATA=, KNATIVE_TESTS=, KNATIVE_NETWORKING_BIN=,
# KNATIVE_NETWORKING_KODATA=, KNATIVE_MODULE= and KNATIVE_NETWORKING_MODULE= (the modules' source) on stdout,
# progress on stderr.
# Usage: dev/build-knative.sh        KNATIVE_SERVING_VERSION=v0.51.0 by default
set -euo pipefail

KNATIVE_SERVING_VERSION=${KNATIVE_SERVING_VERSION:-v0.51.0}
# shellcheck source=go-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-env.sh"

declare -A REPLACE=()
if [[ $KNATIVE_SERVING_VERSION == v0.51.0 ]]; then
  REPLACE=(
    [knative.dev/pkg]=v0.0.0-20260727151759-521cb33b33dd
    [knative.dev/networking]=v0.0.0-20260727162500-c7a7b772cac9
    [knative.dev/caching]=v0.0.0-20260727161800-0edbf88bc267
    [knative.dev/hack]=v0.0.0-20260428014158-b2a37f1b6e7b
    [go.opentelemetry.io/otel/exporters/prometheus]=v0.66.0
    [go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp]=v0.69.0
    [go.opentelemetry.io/contrib/instrumentation/runtime]=v0.69.0
    [go.opentelemetry.io/proto/otlp]=v1.10.0
  )
  for m in otel otel/metric otel/sdk otel/sdk/metric otel/trace otel/exporters/stdout/stdouttrace \
    otel/exporters/otlp/otlptrace otel/exporters/otlp/otlptrace/otlptracegrpc otel/exporters/otlp/otlptrace/otlptracehttp \
    otel/exporters/otlp/otlpmetric/otlpmetricgrpc otel/exporters/otlp/otlpmetric/otlpmetrichttp; do
    REPLACE[go.opentelemetry.io/$m]=v1.44.0
  done
fi
# Bumped when what goes into bin/ or tests/ changes (the replacements above), so a cached build is made again.
RECIPE=2
CONTROL_PLANE=(controller webhook activator autoscaler)

d="$CACHE/knative-serving-$KNATIVE_SERVING_VERSION"
mkdir -p "$d"

# Its own lock, not the toolchain's: this build may run while `npm run up` builds the stack's binaries.
exec 9>"$CACHE/.knative-serving.lock"
if ! flock -n 9; then say "another Knative build is running; waiting for it"; flock 9; fi

# The module whose requirements are serving's, with the replacements above.
module() {
  mkdir -p "$d/src"
  cd "$d/src"
  [[ -f go.mod ]] || go mod init localbuild/knative-serving >/dev/null 2>&1
  for m in "${!REPLACE[@]}"; do go mod edit -replace "$m=$m@${REPLACE[$m]}"; done
  go get "knative.dev/serving@$KNATIVE_SERVING_VERSION"
}

# Main packages under `$1/...`, by import path.
mains() { go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' "$1/..."; }

# A package's role in packages.tsv: queue-proxy, upstream's control plane, or a test image.
serving_role() {
  case $1 in
    */cmd/queue) echo queue ;;
    */cmd/*) echo serving ;;
    *) echo test ;;
  esac
}
networking_role() { echo networking; }

# Builds the main packages after $2 into bin$1/, their kodata/ folders into kodata$1/ (ko puts them at /var/run/ko;
# -L: ko follows symlinks there) and `name<TAB>import path<TAB>role` lines into packages$1.tsv, with $2 the function
# that names a package's role. Each appears only complete (built in *.new, then renamed), so its presence means built.
build_images() {
  local suffix=$1 role_of=$2
  shift 2
  local pkgs=("$@") dups pkg dir name
  dups=$(printf '%s\n' "${pkgs[@]##*/}" | sort | uniq -d)
  [[ -z $dups ]] || die "two main packages share an image name: $dups"
  rm -rf "$d/bin$suffix.new" "$d/kodata$suffix.new"
  mkdir -p "$d/bin$suffix.new" "$d/kodata$suffix.new"
  # With several packages and -o <dir>/, go build names each binary after its import path's last element.
  go build -trimpath -ldflags "-s -w" -o "$d/bin$suffix.new/" "${pkgs[@]}"
  : >"$d/packages$suffix.tsv.new"
  while IFS=$'\t' read -r pkg dir; do
    name=${pkg##*/}
    printf '%s\t%s\t%s\n' "$name" "$pkg" "$("$role_of" "$pkg")" >>"$d/packages$suffix.tsv.new"
    [[ -d $dir/kodata ]] || continue
    cp -rL "$dir/kodata" "$d/kodata$suffix.new/$name"
    chmod -R u+w "$d/kodata$suffix.new/$name"
  done < <(go list -f '{{.ImportPath}}{{"\t"}}{{.Dir}}' "${pkgs[@]}")
  echo "$RECIPE" >"$d/bin$suffix.new/.recipe"
  rm -rf "$d/bin$suffix" "$d/kodata$suffix"
  mv "$d/kodata$suffix.new" "$d/kodata$suffix"
  mv "$d/packages$suffix.tsv.new" "$d/packages$suffix.tsv"
  mv "$d/bin$suffix.new" "$d/bin$suffix"
}

if [[ -x $d/bin/queue && -x $d/bin/controller && -s $d/packages.tsv && $(cat "$d/bin/.recipe" 2>/dev/null) == "$RECIPE" ]]; then
  say "knative serving $KNATIVE_SERVING_VERSION: images cached in $d/bin"
else
  command -v go >/dev/null 2>&1 || die "'go' is not on PATH: install Go (e.g. /usr/local/go/bin) to build Knative's queue-proxy and test images"
  start=$(date +%s)
  say "knative serving $KNATIVE_SERVING_VERSION: building queue-proxy, the test images and the control plane (~2 min with a warm Go cache, several cold)"
  module
  mapfile -t tests < <(mains knative.dev/serving/test/test_images)
  ((${#tests[@]} > 1)) || die "no main packages found under knative.dev/serving/test/test_images"
  pkgs=(knative.dev/serving/cmd/queue "${tests[@]}")
  for c in "${CONTROL_PLANE[@]}"; do pkgs+=("knative.dev/serving/cmd/$c"); done
  say "knative serving: ${#pkgs[@]} main packages: ${pkgs[*]##*/}"
  build_images "" serving_role "${pkgs[@]}"
  say "knative serving $KNATIVE_SERVING_VERSION: images built in $(($(date +%s) - start))s"
fi

if [[ -x $d/bin-networking/runtime && -s $d/packages-networking.tsv && $(cat "$d/bin-networking/.recipe" 2>/dev/null) == "$RECIPE" ]]; then
  say "knative networking: test images cached in $d/bin-networking"
else
  start=$(date +%s)
  say "knative networking: building its test images"
  module
  mapfile -t net < <(mains knative.dev/networking/test/test_images)
  ((${#net[@]} > 1)) || die "no main packages found under knative.dev/networking/test/test_images"
  build_images -networking networking_role "${net[@]}"
  say "knative networking: ${#net[@]} test images built in $(($(date +%s) - start))s: ${net[*]##*/}"
fi

if [[ -x $d/tests/conformance-api-v1.test && -x $d/tests/conformance-runtime.test && -x $d/tests/ingress-conformance.test &&
  $(cat "$d/tests/.recipe" 2>/dev/null) == "$RECIPE" ]]; then
  say "knative serving $KNATIVE_SERVING_VERSION: conformance suites cached in $d/tests"
else
  start=$(date +%s)
  say "knative serving $KNATIVE_SERVING_VERSION: compiling the conformance suites (~2 min with a warm Go cache)"
  module
  rm -rf "$d/tests.new"
  mkdir -p "$d/tests.new"
  go test -c -tags=e2e -trimpath -o "$d/tests.new/conformance-api-v1.test" knative.dev/serving/test/conformance/api/v1
  go test -c -tags=e2e -trimpath -o "$d/tests.new/conformance-runtime.test" knative.dev/serving/test/conformance/runtime
  go test -c -tags=e2e -trimpath -o "$d/tests.new/ingress-conformance.test" knative.dev/networking/test/conformance/ingress
  echo "$RECIPE" >"$d/tests.new/.recipe"
  rm -rf "$d/tests"
  mv "$d/tests.new" "$d/tests"
  say "knative serving $KNATIVE_SERVING_VERSION: conformance suites compiled in $(($(date +%s) - start))s"
fi

echo "KNATIVE_SERVING_VERSION=$KNATIVE_SERVING_VERSION"
echo "KNATIVE_BIN=$d/bin"
echo "KNATIVE_KODATA=$d/kodata"
echo "KNATIVE_TESTS=$d/tests"
echo "KNATIVE_NETWORKING_BIN=$d/bin-networking"
echo "KNATIVE_NETWORKING_KODATA=$d/kodata-networking"
echo "KNATIVE_NETWORKING_MODULE=$(cd "$d/src" && go list -m -f '{{.Dir}}' knative.dev/networking)"
echo "KNATIVE_MODULE=$GOMODCACHE/knative.dev/serving@$KNATIVE_SERVING_VERSION"
