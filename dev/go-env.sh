# Sourced by the build scripts (toolchain.sh, build-knative.sh, build-traefik.sh): one Go environment for all of them,
# with the module and build caches under ~/.cache/tidal so every build reuses what another compiled.
CACHE=${TIDAL_CACHE:-$HOME/.cache/tidal}

export CGO_ENABLED=0 GOFLAGS=-mod=mod GOTOOLCHAIN=local
export GOMODCACHE=${GOMODCACHE:-$CACHE/go/mod} GOCACHE=${GOCACHE:-$CACHE/go/build}

say() { printf '[toolchain] %s\n' "$*" >&2; }
die() { say "error: $*"; exit 1; }

# Debian's Go image puts go in /usr/local/go/bin, which a non-login shell may not have on PATH.
if [[ -x /usr/local/go/bin/go ]] && ! command -v go >/dev/null 2>&1; then export PATH=/usr/local/go/bin:$PATH; fi
