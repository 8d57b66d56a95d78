#!/usr/bin/env bash
# Builds Knative Serving's queue-proxy (cmd/queue) and every test image of its conformance and e2e tests (each main
# package under test/test_images/) from the Go module proxy, as static binaries, into
# ~/.cache/tidal/knative-serving-<version>/bin/<image name>, reusing what is there. dev/knative-images.ts packages them
# as OCI images.
#
# An image is named as ko names it with --base-import-paths, which upstream's test/upload-test-images.sh passes (-B)
# and the tests' image names (test/conformance.go: "servingcontainer", "grpc-ping", …) assume: the last element of the
# import path. queue-proxy is `queue`. A main package's kodata/ folder, if it has one, is copied to
# <cache>/kodata/<image name>/ (ko puts it at /var/run/ko); the module zips of v0.42.2 carry none.
#
# Beside bin/ and kodata/, packages.tsv lists each image's name and import path.
# Prints KNATIVE_SERVING_VERSION=, KNATIVE_BIN=<dir> and KNATIVE_KODATA=<dir> on stdout, progress on stderr.
# Usage: dev/build-knative.sh        KNATIVE_SERVING_VERSION=v0.42.2 by default (Knative 1.15.2; v0.51.0's pinned
#                                    knative.dev/pkg pseudo-versions are refused by the module proxy)
set -euo pipefail

KNATIVE_SERVING_VERSION=${KNATIVE_SERVING_VERSION:-v0.42.2}
# shellcheck source=go-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-env.sh"

d="$CACHE/knative-serving-$KNATIVE_SERVING_VERSION"
mkdir -p "$d"

# Its own lock, not the toolchain's: this build may run while `npm run up` builds the stack's binaries.
exec 9>"$CACHE/.knative-serving.lock"
if ! flock -n 9; then say "another Knative build is running; waiting for it"; flock 9; fi

# bin/ appears only complete (built in bin.new/, then renamed), so its presence means built.
if [[ -x $d/bin/queue && -s $d/packages.tsv ]]; then
  say "knative serving $KNATIVE_SERVING_VERSION: cached in $d/bin"
else
  command -v go >/dev/null 2>&1 || die "'go' is not on PATH: install Go (e.g. /usr/local/go/bin) to build Knative's queue-proxy and test images"
  start=$(date +%s)
  say "knative serving $KNATIVE_SERVING_VERSION: building queue-proxy and the test images (~1 min with a warm Go cache, several cold)"
  mkdir -p "$d/src"
  cd "$d/src"
  [[ -f go.mod ]] || go mod init localbuild/knative-serving >/dev/null 2>&1
  go get "knative.dev/serving@$KNATIVE_SERVING_VERSION"
  mapfile -t pkgs < <(go list -f '{{if eq .Name "main"}}{{.ImportPath}}{{end}}' \
    knative.dev/serving/cmd/queue knative.dev/serving/test/test_images/...)
  ((${#pkgs[@]} > 1)) || die "no main packages found under knative.dev/serving/test/test_images"
  dups=$(printf '%s\n' "${pkgs[@]##*/}" | sort | uniq -d)
  [[ -z $dups ]] || die "two main packages share an image name: $dups"
  say "knative serving: ${#pkgs[@]} main packages: ${pkgs[*]##*/}"
  rm -rf "$d/bin.new" "$d/kodata.new"
  mkdir -p "$d/bin.new" "$d/kodata.new"
  # With several packages and -o <dir>/, go build names each binary after its import path's last element.
  go build -trimpath -ldflags "-s -w" -o "$d/bin.new/" "${pkgs[@]}"
  : >"$d/packages.tsv.new"
  while IFS=$'\t' read -r pkg dir; do
    name=${pkg##*/}
    printf '%s\t%s\n' "$name" "$pkg" >>"$d/packages.tsv.new"
    [[ -d $dir/kodata ]] || continue
    # -L: ko follows symlinks in kodata (upstream links LICENSE and the git HEAD there).
    cp -rL "$dir/kodata" "$d/kodata.new/$name"
    chmod -R u+w "$d/kodata.new/$name"
  done < <(go list -f '{{.ImportPath}}{{"\t"}}{{.Dir}}' "${pkgs[@]}")
  rm -rf "$d/bin" "$d/kodata"
  mv "$d/kodata.new" "$d/kodata"
  mv "$d/packages.tsv.new" "$d/packages.tsv"
  mv "$d/bin.new" "$d/bin"
  say "knative serving $KNATIVE_SERVING_VERSION: built in $(($(date +%s) - start))s"
fi

echo "KNATIVE_SERVING_VERSION=$KNATIVE_SERVING_VERSION"
echo "KNATIVE_BIN=$d/bin"
echo "KNATIVE_KODATA=$d/kodata"
