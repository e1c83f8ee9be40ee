#!/usr/bin/env bash
# Entry point of the shard nodes in docker/compose.yml: runs `rnode ARGS...`
# with the two flags compose cannot write down itself, as scripts/shard
# passes them:
#   --deploy-timestamp  the genesis time from $RNODE_SHARD_DIR/genesis/keys.json
#                       (docker/genesis.sh writes it once)
#   --bootstrap         $RNODE_BOOTSTRAP if set; else, when
#                       $RNODE_BOOTSTRAP_STATUS names a node's /api/status URL,
#                       the `address` that node reports, polled until it
#                       answers (at most $RNODE_JOIN_DEADLINE_S, default 300 s)
# The bootstrap's node id comes from the P2P key it makes on its first start,
# so it is asked rather than computed: no keccak256 in a shell, and a
# bootstrap on another host or with a kept key works the same.
set -euo pipefail

shard_dir="${RNODE_SHARD_DIR:-/shard}"
keys="$shard_dir/genesis/keys.json"
deadline_s="${RNODE_JOIN_DEADLINE_S:-300}"
# Between two polls of the bootstrap's status.
poll_interval_s=1

fail() {
  echo "join: $*" >&2
  exit 1
}

[ -r "$keys" ] || fail "$keys missing or unreadable (the genesis job makes it)"
genesis_time_ms="$(tr -d ' \n\r\t' <"$keys" |
  sed -n 's/.*"genesis_time_ms":\([0-9][0-9]*\).*/\1/p')"
[ -n "$genesis_time_ms" ] || fail "$keys holds no genesis_time_ms"

# The node's own address from an /api/status body. The peerList holds
# addresses too, so it is cut out first; its entries hold no ']'.
status_address() {
  sed -e 's/"peerList":\[[^]]*\]//' |
    grep -o '"address":"rnode://[^"]*"' | head -n 1 |
    sed -e 's/^"address":"//' -e 's/"$//'
}

bootstrap="${RNODE_BOOTSTRAP:-}"
if [ -z "$bootstrap" ] && [ -n "${RNODE_BOOTSTRAP_STATUS:-}" ]; then
  deadline=$((SECONDS + deadline_s))
  while :; do
    if body="$(curl -fsS --max-time 2 "$RNODE_BOOTSTRAP_STATUS" 2>/dev/null)"; then
      bootstrap="$(status_address <<<"$body" || true)"
      [ -n "$bootstrap" ] && break
    fi
    if ((SECONDS >= deadline)); then
      fail "no rnode:// address from $RNODE_BOOTSTRAP_STATUS in ${deadline_s} s"
    fi
    sleep "$poll_interval_s"
  done
  echo "join: bootstrap $bootstrap"
fi

args=("$@" --deploy-timestamp "$genesis_time_ms")
if [ -n "$bootstrap" ]; then args+=(--bootstrap "$bootstrap"); fi
exec rnode "${args[@]}"
