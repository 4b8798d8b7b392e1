#!/usr/bin/env bash
# Profiles the sandbox with `perf record` during the `GET /v1/accounts` run of the reads bench
# (BENCHMARKS.md, "Everyday reads"): starts the bench, waits until wrk runs against
# /v1/accounts, attaches perf to the newest `sandbox serve` for 6 s, then lets the bench end.
#   benches/perf_reads.sh [perf.data path]     then: perf report -i <path> --no-children -g none --sort sym
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-/tmp/perf.data}
B=${PSD2_LOAD_BENCH_BIN:-}; if [ -n "$B" ]; then PSD2_LOAD_SECS=${PSD2_LOAD_SECS:-8} "$B" reads; else PSD2_LOAD_SECS=${PSD2_LOAD_SECS:-8} cargo bench --bench load -- reads; fi >/tmp/perf_reads-bench.log 2>&1 &
bench=$!
for _ in $(seq 1 1500); do
    if pgrep -af "^wrk" | grep -qE "/v1/accounts( |$)"; then break; fi
    sleep 0.2
done
pid=$(pgrep -n -f "psd2-console sandbox serve")
echo "sandbox pid $pid"
perf record -F 2999 -g -p "$pid" -o "$out" -- sleep 6
wait "$bench"
