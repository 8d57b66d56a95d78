#!/usr/bin/env bash
# The real node's OCI runtime: Debian's runc, with one adjustment. The kubelet asks for negative OOM scores (-998 for
# a pod's sandbox, -997 for Guaranteed containers); lowering a score needs CAP_SYS_RESOURCE, which some hosts (these
# sandboxed machines among them) withhold even from root, and runc then fails every sandbox with "can't get final
# child's PID from pipe". Where the host refuses it, the score is raised to the lowest one this process may set.
set -euo pipefail
runc=${TIDAL_RUNC:-runc}
bundle='' create=''
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case ${args[i]} in
    --bundle | -b) bundle=${args[i + 1]:-} ;;
    create | run) create=1 ;;
  esac
done
if [[ -n $create && -n $bundle && -f $bundle/config.json ]]; then
  want=$(jq '.process.oomScoreAdj // 0' "$bundle/config.json")
  floor=$(cat /proc/self/oom_score_adj)
  if ((want < floor)) && ! (echo "$want" >/proc/self/oom_score_adj) 2>/dev/null; then
    jq -c --argjson floor "$floor" '.process.oomScoreAdj = $floor' "$bundle/config.json" >"$bundle/config.json.tmp"
    mv "$bundle/config.json.tmp" "$bundle/config.json"
  fi
fi
exec "$runc" "$@"
