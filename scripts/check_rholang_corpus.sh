#!/usr/bin/env bash
# Checks every .rho file under a corpus directory with `rholang check`, and
# for each accepted file that `rholang fmt` output normalizes to the same
# hash (print/parse round trip). The corpus (for example the public F1R3FLY
# rholang/examples and casper/src/{main,test}/resources, extracted outside
# this repository) is never committed here.
#
# Usage: scripts/check_rholang_corpus.sh CORPUS_DIR [RHOLANG_BINARY]
set -euo pipefail

if [[ $# -lt 1 ]]; then
  echo "usage: $0 CORPUS_DIR [RHOLANG_BINARY]" >&2
  exit 2
fi
corpus=$1
tool=${2:-"$(dirname "$0")/../build/bin/rholang"}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

total=0 passed=0 roundtrip_failed=0
failed_files=()
while IFS= read -r -d '' file; do
  total=$((total + 1))
  if err=$("$tool" check "$file" 2>&1); then
    passed=$((passed + 1))
    "$tool" fmt "$file" > "$work/printed.rho"
    h1=$("$tool" hash "$file" | cut -d' ' -f1)
    h2=$("$tool" hash "$work/printed.rho" 2>/dev/null | cut -d' ' -f1 || true)
    if [[ "$h1" != "$h2" ]]; then
      roundtrip_failed=$((roundtrip_failed + 1))
      echo "ROUND TRIP MISMATCH: $file"
    fi
  else
    failed_files+=("$err")
  fi
done < <(find "$corpus" -name '*.rho' -type f -print0 | sort -z)

echo "files: $total  accepted: $passed  rejected: $((total - passed))" \
     " round-trip mismatches: $roundtrip_failed"
for e in "${failed_files[@]}"; do echo "  $e"; done
[[ $roundtrip_failed -eq 0 ]]
