#!/usr/bin/env bash
# Builds the local stack's binaries from the Go module proxy and caches them under ~/.cache/tidal/.
# Each component lives in its own versioned folder and is rebuilt only when its binary is missing.
# Override: TIDAL_BIN_DIR=/some/dir uses binaries already there (etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, kwok, temporal, kn, and for the PostgreSQL option temporal-server, temporal-sql-tool) and builds nothing.
# Usage: dev/toolchain.sh [all|k8s|etcd|kwok|temporal|kn|temporal-server|node|istio-crds|paths]
# `node` builds the real node's kubelet, CNI plugins and pause program and prints their KEY=path lines.
# `temporal-server` builds the Temporal server and temporal-sql-tool (the PostgreSQL stack option) and prints their
# KEY=path lines; `all` builds them too, right after the CLI, whose build cache makes them ~30 s more.
set -euo pipefail

K8S_VERSION=${K8S_VERSION:-v1.35.4}
ETCD_VERSION=${ETCD_VERSION:-v3.6.16}
KWOK_VERSION=${KWOK_VERSION:-v0.7.0}
TEMPORAL_CLI_VERSION=${TEMPORAL_CLI_VERSION:-v1.5.1}
ISTIO_API_VERSION=${ISTIO_API_VERSION:-v1.31.1}
CNI_PLUGINS_VERSION=${CNI_PLUGINS_VERSION:-v1.10.0}
# Knative's client, `kn`: v0.42.0 is its newest release whose modules all come from the Go module proxy (later ones
# need the nested module knative.dev/client/pkg, which the proxy does not serve). It speaks serving.knative.dev/v1.
KN_VERSION=${KN_VERSION:-v0.42.0}
# The server the CLI above embeds (its go.mod requires go.temporal.io/server v1.29.1).
TEMPORAL_SERVER_VERSION=${TEMPORAL_SERVER_VERSION:-v1.29.1}
# shellcheck source=go-env.sh
source "$(dirname "${BASH_SOURCE[0]}")/go-env.sh"

need_go() {
  command -v go >/dev/null 2>&1 || die "'go' is not on PATH. Install Go 1.26 (e.g. /usr/local/go/bin) or set TIDAL_BIN_DIR to a folder with prebuilt etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and temporal."
}

k8s_dir() { echo "$CACHE/kubernetes-$K8S_VERSION"; }
etcd_dir() { echo "$CACHE/etcd-$ETCD_VERSION"; }
kwok_dir() { echo "$CACHE/kwok-$KWOK_VERSION"; }
temporal_dir() { echo "$CACHE/temporal-cli-$TEMPORAL_CLI_VERSION"; }
kn_dir() { echo "$CACHE/kn-$KN_VERSION"; }
temporal_server_dir() { echo "$CACHE/temporal-server-$TEMPORAL_SERVER_VERSION"; }

build_k8s() {
  local d; d=$(k8s_dir)
  if [[ -x $d/bin/kube-apiserver && -x $d/bin/kube-controller-manager && -x $d/bin/kube-scheduler && -x $d/bin/kubectl ]]; then
    say "kubernetes $K8S_VERSION: cached in $d/bin"; return
  fi
  need_go
  say "kubernetes $K8S_VERSION: building kube-apiserver, kube-controller-manager, kube-scheduler, kubectl (cold: ~20-30 min on 2 cores)"
  mkdir -p "$d/src" "$d/bin"
  (
    cd "$d/src"
    [[ -f go.mod ]] || go mod init localbuild/k8s >/dev/null 2>&1
    local stg="v0.${K8S_VERSION#v1.}" minor kmod
    minor=$(cut -d. -f2 <<<"$K8S_VERSION")
    kmod=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" | jq -r .GoMod)
    # Every staging module that k8s.io/kubernetes replaces with ./staging/... is published as v0.<minor>.<patch>.
    sed -nE 's#^[[:space:]]*(replace[[:space:]]+)?(k8s\.io/[A-Za-z0-9._-]+)[[:space:]]+=>[[:space:]]+\./staging/.*#\2#p' "$kmod" |
      while read -r m; do go mod edit -replace="$m=$m@$stg"; done
    go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@$K8S_VERSION" "k8s.io/kubernetes/cmd/kube-controller-manager@$K8S_VERSION" \
      "k8s.io/kubernetes/cmd/kube-scheduler@$K8S_VERSION" "k8s.io/kubernetes/cmd/kubectl@$K8S_VERSION"
    # Unstamped binaries report v0.0.0-master, which breaks semver-parsing clients: stamp like hack/lib/version.sh.
    local ldf="-s -w" p
    for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
      ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
    done
    go build -v -trimpath -ldflags "$ldf" -o "$d/bin/" k8s.io/kubernetes/cmd/kube-apiserver \
      k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl 2>&1 |
      awk '{n++; if (n % 200 == 0) printf "[toolchain] kubernetes: %d packages compiled\n", n > "/dev/stderr"}'
  )
  "$d/bin/kube-apiserver" --version | grep -q "Kubernetes $K8S_VERSION" || die "kube-apiserver is not stamped $K8S_VERSION"
  say "kubernetes $K8S_VERSION: built"
}

build_etcd() {
  local d; d=$(etcd_dir)
  if [[ -x $d/bin/etcd ]]; then say "etcd $ETCD_VERSION: cached"; return; fi
  need_go
  say "etcd $ETCD_VERSION: building"
  mkdir -p "$d/src" "$d/bin"
  (
    cd "$d/src"
    [[ -f go.mod ]] || go mod init localbuild/etcd >/dev/null 2>&1
    # A dependency's replace lines are ignored and etcd's siblings share one tag, so no replaces are needed.
    go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
    go build -trimpath -ldflags "-s -w" -o "$d/bin/etcd" go.etcd.io/etcd/server/v3
  )
  say "etcd $ETCD_VERSION: built"
}

build_kwok() {
  local d; d=$(kwok_dir)
  if [[ -x $d/bin/kwok ]]; then say "kwok $KWOK_VERSION: cached"; return; fi
  need_go
  say "kwok $KWOK_VERSION: building"
  mkdir -p "$d/bin"
  GOBIN="$d/bin" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
  say "kwok $KWOK_VERSION: built"
}

build_temporal() {
  local d; d=$(temporal_dir)
  if [[ -x $d/bin/temporal ]]; then say "temporal CLI $TEMPORAL_CLI_VERSION: cached"; return; fi
  need_go
  say "temporal CLI $TEMPORAL_CLI_VERSION: building (embeds the server and the UI)"
  mkdir -p "$d/bin"
  # v1.5.1 has no replace directive, so a plain install works (v1.6+ needs a wrapper module for cliext).
  GOBIN="$d/bin" go install -trimpath -ldflags "-s -w -X github.com/temporalio/cli/temporalcli.Version=${TEMPORAL_CLI_VERSION#v}" \
    "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
  say "temporal CLI $TEMPORAL_CLI_VERSION: built"
}

build_temporal_server() {
  local d; d=$(temporal_server_dir)
  if [[ -x $d/bin/temporal-server && -x $d/bin/temporal-sql-tool ]]; then
    say "temporal server $TEMPORAL_SERVER_VERSION: cached in $d/bin"; return
  fi
  need_go
  say "temporal server $TEMPORAL_SERVER_VERSION: building temporal-server and temporal-sql-tool"
  mkdir -p "$d/src" "$d/bin"
  (
    cd "$d/src"
    [[ -f go.mod ]] || go mod init localbuild/temporal-server >/dev/null 2>&1
    # Requiring the CLI pins every shared dependency to the versions the CLI was built with, so most packages come
    # from the Go build cache the CLI build filled.
    go get "github.com/temporalio/cli@$TEMPORAL_CLI_VERSION"
    go get -tool "go.temporal.io/server/cmd/server@$TEMPORAL_SERVER_VERSION" "go.temporal.io/server/cmd/tools/sql@$TEMPORAL_SERVER_VERSION"
    go build -trimpath -ldflags "-s -w" -o "$d/bin/temporal-server" go.temporal.io/server/cmd/server
    # The tool embeds the module's schema/ files (setup-schema/update-schema --schema-name postgresql/v12/...).
    go build -trimpath -ldflags "-s -w" -o "$d/bin/temporal-sql-tool" go.temporal.io/server/cmd/tools/sql
  )
  say "temporal server $TEMPORAL_SERVER_VERSION: built"
}

build_kn() {
  local d; d=$(kn_dir)
  if [[ -x $d/bin/kn ]]; then say "kn $KN_VERSION: cached"; return; fi
  need_go
  say "kn $KN_VERSION: building"
  mkdir -p "$d/src" "$d/bin"
  (
    cd "$d/src"
    [[ -f go.mod ]] || go mod init localbuild/kn >/dev/null 2>&1
    go get -tool "knative.dev/client/cmd/kn@$KN_VERSION"
    go build -trimpath -ldflags "-s -w -X knative.dev/client/pkg/kn/commands/version.Version=$KN_VERSION" -o "$d/bin/kn" knative.dev/client/cmd/kn
  )
  say "kn $KN_VERSION: built"
}

# The real node (dev/node.ts): the kubelet (same Kubernetes version and build folder as the control plane), the CNI
# plugins its pods' network needs (bridge, host-local, loopback) and the sandbox ("pause") program of dev/node/pause.
node_dir() { echo "$CACHE/node-$K8S_VERSION-cni-$CNI_PLUGINS_VERSION"; }
build_node() {
  local d k; d=$(node_dir); k=$(k8s_dir)
  if [[ -x $d/bin/kubelet && -x $d/cni/bridge && -x $d/cni/host-local && -x $d/cni/loopback && -x $d/bin/pause ]]; then
    say "real node (kubelet $K8S_VERSION, CNI plugins $CNI_PLUGINS_VERSION): cached in $d"; return
  fi
  need_go
  say "real node: building kubelet $K8S_VERSION, CNI plugins $CNI_PLUGINS_VERSION and pause"
  mkdir -p "$d/bin" "$d/cni" "$d/cni-src" "$k/src"
  local minor ldf="-s -w" p
  minor=$(cut -d. -f2 <<<"$K8S_VERSION")
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ldf+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor -X $p.gitTreeState=clean -X $p.buildDate=2026-01-01T00:00:00Z"
  done
  # The control plane's module (build_k8s) already pins every staging module: the kubelet shares its build cache.
  [[ -f $k/src/go.mod ]] || build_k8s
  (cd "$k/src" && go get -tool "k8s.io/kubernetes/cmd/kubelet@$K8S_VERSION" && go build -trimpath -ldflags "$ldf" -o "$d/bin/kubelet" k8s.io/kubernetes/cmd/kubelet)
  (
    cd "$d/cni-src"
    [[ -f go.mod ]] || go mod init localbuild/cni >/dev/null 2>&1
    go get "github.com/containernetworking/plugins@$CNI_PLUGINS_VERSION"
    go build -trimpath -ldflags "-s -w" -o "$d/cni/" github.com/containernetworking/plugins/plugins/main/bridge \
      github.com/containernetworking/plugins/plugins/ipam/host-local github.com/containernetworking/plugins/plugins/main/loopback
  )
  (cd "$(dirname "${BASH_SOURCE[0]}")/node/pause" && go build -trimpath -ldflags "-s -w" -o "$d/bin/pause" .)
  "$d/bin/kubelet" --version | grep -q "Kubernetes $K8S_VERSION" || die "kubelet is not stamped $K8S_VERSION"
  say "real node: built"
}
node_paths() {
  if [[ -n ${TIDAL_BIN_DIR:-} ]]; then
    echo "KUBELET=$TIDAL_BIN_DIR/kubelet"; echo "CNI_BIN=$TIDAL_BIN_DIR/cni"; echo "PAUSE=$TIDAL_BIN_DIR/pause"; return
  fi
  local d; d=$(node_dir)
  echo "KUBELET=$d/bin/kubelet"; echo "CNI_BIN=$d/cni"; echo "PAUSE=$d/bin/pause"
}

temporal_server_paths() {
  local b=${TIDAL_BIN_DIR:-$(temporal_server_dir)/bin}
  echo "TEMPORAL_SERVER=$b/temporal-server"; echo "TEMPORAL_SQL_TOOL=$b/temporal-sql-tool"
}

istio_crds() {
  local f="$CACHE/istio-api-$ISTIO_API_VERSION/customresourcedefinitions.gen.yaml"
  if [[ ! -s $f ]]; then
    need_go
    mkdir -p "$(dirname "$f")"
    local dir
    dir=$(cd "$CACHE" && go mod download -json "istio.io/api@$ISTIO_API_VERSION" | jq -r .Dir)
    cp "$dir/kubernetes/customresourcedefinitions.gen.yaml" "$f"
  fi
  echo "$f"
}

# Prints KEY=path lines the launcher reads.
paths() {
  if [[ -n ${TIDAL_BIN_DIR:-} ]]; then
    local b=$TIDAL_BIN_DIR
    echo "ETCD=$b/etcd"; echo "KUBE_APISERVER=$b/kube-apiserver"; echo "KUBE_CONTROLLER_MANAGER=$b/kube-controller-manager"
    echo "KUBE_SCHEDULER=$b/kube-scheduler"; echo "KUBECTL=$b/kubectl"; echo "KWOK=$b/kwok"; echo "TEMPORAL=$b/temporal"
    echo "KN=$b/kn"
  else
    echo "ETCD=$(etcd_dir)/bin/etcd"
    echo "KUBE_APISERVER=$(k8s_dir)/bin/kube-apiserver"
    echo "KUBE_CONTROLLER_MANAGER=$(k8s_dir)/bin/kube-controller-manager"
    echo "KUBE_SCHEDULER=$(k8s_dir)/bin/kube-scheduler"
    echo "KUBECTL=$(k8s_dir)/bin/kubectl"
    echo "KWOK=$(kwok_dir)/bin/kwok"
    echo "TEMPORAL=$(temporal_dir)/bin/temporal"
    echo "KN=$(kn_dir)/bin/kn"
  fi
  echo "ISTIO_CRDS=$(istio_crds)"
  echo "KWOK_VERSION=$KWOK_VERSION"
}

# One build at a time: a second caller (an e2e setup while `npm run up` builds, say) waits for the first.
if [[ ${1:-all} != paths ]]; then
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.toolchain.lock"
  if ! flock -n 9; then say "another toolchain build is running; waiting for it"; flock 9; fi
fi

case ${1:-all} in
  all)
    if [[ -n ${TIDAL_BIN_DIR:-} ]]; then say "TIDAL_BIN_DIR=$TIDAL_BIN_DIR: using prebuilt binaries"; istio_crds >/dev/null; exit 0; fi
    start=$(date +%s)
    build_temporal; build_temporal_server; build_etcd; build_kwok; build_k8s; build_kn; istio_crds >/dev/null
    say "toolchain ready in $(( $(date +%s) - start ))s"
    ;;
  k8s) build_k8s ;; etcd) build_etcd ;; kwok) build_kwok ;; temporal) build_temporal ;; kn) build_kn ;;
  temporal-server)
    if [[ -z ${TIDAL_BIN_DIR:-} ]]; then start=$(date +%s); build_temporal_server; say "temporal server ready in $(( $(date +%s) - start ))s"; fi
    temporal_server_paths
    ;;
  node)
    if [[ -z ${TIDAL_BIN_DIR:-} ]]; then start=$(date +%s); build_node; say "real node ready in $(( $(date +%s) - start ))s"; fi
    node_paths
    ;;
  istio-crds) istio_crds ;;
  paths) paths ;;
  *) die "unknown target '$1' (all|k8s|etcd|kwok|temporal|kn|temporal-server|node|istio-crds|paths)" ;;
esac
