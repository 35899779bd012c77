#!/usr/bin/env bash
# Runs each fuzz target for SECONDS, two at a time (this machine has two cores), over its
# committed corpus (harness/fuzz/corpus/<target>, plus the shipped skip lists for the skip-list
# target) and a scratch corpus in BUILD/corpus/<target>, then prints executions per second, total
# executions and new corpus entries per target. Exits 1 if any target found a crash, leak or UB:
# the input is in BUILD/crashes/. Usage: ci/fuzz.sh BUILD SECONDS TARGET...
set -euo pipefail
build=$1 seconds=$2
shift 2
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$build/crashes" "$build/logs"
export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-$(ls /usr/lib/llvm-16/bin/llvm-symbolizer 2>/dev/null || command -v llvm-symbolizer || true)}

run_target() {
  local target=$1 seeds=("$root/harness/fuzz/corpus/$1")
  [ "$target" = skiplist ] && seeds+=("$root/skiplists")
  [ "$target" = ledger ] && seeds+=("$root/skiplists/ledger")
  mkdir -p "$build/corpus/$target"
  "$build/harness/fuzz/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=2048 -artifact_prefix="$build/crashes/$target-" \
    "$build/corpus/$target" "${seeds[@]}" >"$build/logs/$target.log" 2>&1
}

declare -A status
running=()
for target in "$@"; do
  echo "==> fuzz_$target for ${seconds}s"
  run_target "$target" &
  running+=("$!:$target")
  if [ "${#running[@]}" -ge 2 ]; then
    entry=${running[0]}; running=("${running[@]:1}")
    wait "${entry%%:*}" && status[${entry#*:}]=0 || status[${entry#*:}]=$?
  fi
done
for entry in "${running[@]}"; do
  wait "${entry%%:*}" && status[${entry#*:}]=0 || status[${entry#*:}]=$?
done

failed=0
printf '\n%-20s %10s %14s %8s  %s\n' target exec/s executions corpus result
for target in "$@"; do
  log="$build/logs/$target.log"
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  rate=$(grep -o 'stat::average_exec_per_sec: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
  corpus=$(find "$build/corpus/$target" -type f | wc -l)
  if [ "${status[$target]}" = 0 ]; then result=clean; else result="FAILED (see $log)"; failed=1; fi
  printf '%-20s %10s %14s %8s  %s\n' "fuzz_$target" "$rate" "$execs" "$corpus" "$result"
done
if [ "$failed" = 1 ]; then
  echo "fuzz: a target failed; its input is in $build/crashes/ (add it to harness/fuzz/corpus/<target>/ with the fix)" >&2
  exit 1
fi
