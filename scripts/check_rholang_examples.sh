#!/usr/bin/env bash
# Runs `rholang run` on every .rho file under DIR (for example the public
# F1R3FLY rholang/examples, extracted outside this repository and never
# committed here) with a per-file timeout and phlo limit, and prints one row
# per file: ok / static error / runtime error (message) / timeout / crash,
# then the counts per outcome.
#
# Usage: scripts/check_rholang_examples.sh DIR [RHOLANG_BINARY]
# Environment: TIMEOUT_SECONDS (default 20), PHLO (default 100000000).
# Exit status: 0 unless a file crashed the tool (a signal or an exit code
# other than 0 and 1), which is never acceptable whatever the program.
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 DIR [RHOLANG_BINARY]" >&2
  exit 2
fi
dir=$1
tool=${2:-"$(dirname "$0")/../build/bin/rholang"}
timeout_seconds=${TIMEOUT_SECONDS:-20}
phlo=${PHLO:-100000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A count=([ok]=0 ["static error"]=0 ["runtime error"]=0 [timeout]=0
                  [crash]=0)
total=0
printf '%-60s %s\n' "FILE" "OUTCOME"
while IFS= read -r -d '' file; do
  total=$((total + 1))
  rel=${file#"$dir"/}
  set +e
  timeout "$timeout_seconds" "$tool" run --phlo "$phlo" "$file" \
    > "$work/out" 2> "$work/err"
  rc=$?
  set -e
  # The first error line of stderr without the file name: `LINE:COL: msg`
  # for a static error, `msg` for a runtime error.
  message=$(grep -m1 'error: ' "$work/err" 2>/dev/null \
              | sed -e "s|^$file:||" -e 's|^ *error: ||' -e 's| error: | |' \
              | cut -c1-150 || true)
  if [[ $rc -eq 124 ]]; then
    outcome=timeout
  elif [[ $rc -eq 0 ]]; then
    outcome=ok
  elif [[ $rc -eq 1 ]] && grep -q -E '^[^ ]*:[0-9]+:[0-9]+: error:' "$work/err"; then
    outcome="static error"
  elif [[ $rc -eq 1 ]]; then
    outcome="runtime error"
  else
    outcome=crash
    message="exit status $rc; $(tail -c 150 "$work/err" | tr '\n' ' ')"
  fi
  count[$outcome]=$((count[$outcome] + 1))
  if [[ $outcome == ok || $outcome == timeout ]]; then
    printf '%-60s %s\n' "$rel" "$outcome"
  else
    printf '%-60s %s: %s\n' "$rel" "$outcome" "$message"
  fi
done < <(find "$dir" -name '*.rho' -type f -print0 | sort -z)

echo
echo "files: $total  ok: ${count[ok]}  static error: ${count[static error]}" \
     " runtime error: ${count[runtime error]}  timeout: ${count[timeout]}" \
     " crash: ${count[crash]}"
[[ ${count[crash]} -eq 0 ]]
