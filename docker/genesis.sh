#!/usr/bin/env bash
# The genesis job of docker/compose.yml: makes a shard's validator keys,
# bonds, wallets and genesis time once, in scripts/shard's layout:
#   $RNODE_SHARD_DIR/genesis/bonds.txt     "<public key> <stake>" per validator
#   $RNODE_SHARD_DIR/genesis/wallets.txt   "<REV address>,<balance>" per validator
#   $RNODE_SHARD_DIR/genesis/keys.json     the key pairs and genesis_time_ms
#   $RNODE_SHARD_DIR/validatorN/validator.key
# Keep in step with scripts/shard (cmd_up). A folder that already holds
# genesis/keys.json is left as it is, so the job can run on every `up`.
# Environment: RNODE_SHARD_DIR (default /shard), RNODE_VALIDATORS (default 3).
set -euo pipefail

dir="${RNODE_SHARD_DIR:-/shard}"
validators="${RNODE_VALIDATORS:-3}"
# scripts/shard's STAKE and BALANCE (50 million REV in dust).
stake=1000
balance=5000000000000000

if [ -f "$dir/genesis/keys.json" ]; then
  echo "genesis: kept the shard in $dir (genesis/keys.json exists)"
  exit 0
fi
if ! [[ "$validators" =~ ^[1-9][0-9]*$ ]] || [ "$validators" -gt 32 ]; then
  echo "genesis: RNODE_VALIDATORS must be between 1 and 32" >&2
  exit 1
fi

# Everything is made in a staging folder; genesis/ is moved in last, so a job
# stopped half way leaves no genesis/keys.json and the next run starts over.
umask 077
staging="$dir/.staging"
rm -rf "$staging"
mkdir -p "$staging/genesis"
genesis_time_ms="$(date +%s%3N)"
{
  echo '{'
  echo ' "keys": ['
} >"$staging/genesis/keys.json"
for ((i = 1; i <= validators; i++)); do
  private="" public="" address=""
  while IFS=': ' read -r name value; do
    case "$name" in
      private) private="$value" ;;
      public) public="$value" ;;
      address) address="$value" ;;
    esac
  done < <(rnode keygen)
  if [ -z "$private" ] || [ -z "$public" ] || [ -z "$address" ]; then
    echo "genesis: rnode keygen printed no private, public and address" >&2
    exit 1
  fi
  mkdir -p "$staging/validator$i"
  echo "$private" >"$staging/validator$i/validator.key"
  echo "$public $stake" >>"$staging/genesis/bonds.txt"
  echo "$address,$balance" >>"$staging/genesis/wallets.txt"
  separator=","
  if [ "$i" -eq "$validators" ]; then separator=""; fi
  printf '  {\n   "private": "%s",\n   "public": "%s",\n   "address": "%s"\n  }%s\n' \
    "$private" "$public" "$address" "$separator" >>"$staging/genesis/keys.json"
done
{
  echo ' ],'
  echo " \"genesis_time_ms\": $genesis_time_ms"
  echo '}'
} >>"$staging/genesis/keys.json"

for ((i = 1; i <= validators; i++)); do
  rm -rf "${dir:?}/validator$i"
  mv "$staging/validator$i" "$dir/validator$i"
done
rm -rf "${dir:?}/genesis"
mv "$staging/genesis" "$dir/genesis"
rmdir "$staging"
echo "genesis: made a shard of $validators validators in $dir (genesis time $genesis_time_ms ms)"
