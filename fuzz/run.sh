#!/usr/bin/env bash
# Runs the fuzz targets one after another at the lowest priority (BENCHMARKS.md, "Fuzzing"):
#   fuzz/run.sh [seconds per target, default 1800] [target...]   (default: every target)
# PSD2_FUZZ_NICE sets the niceness (default 19: the lowest priority).
# Each run stops at 10 million executions, at the time limit, or at the first crash (the
# input is then in fuzz/artifacts/<target>/). Grown corpora go to fuzz/corpus/<target>
# (not committed), logs to fuzz/logs/<target>.log; the last line of each log is libFuzzer's
# final `#<runs> ... cov: <edges> ft: <features>` status.
set -uo pipefail
cd "$(dirname "$0")/.."
secs=${1:-1800}
shift || true
if [ "$#" -gt 0 ]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi
mkdir -p fuzz/logs
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t"
    start=$(date +%s)
    nice -n "${PSD2_FUZZ_NICE:-19}" cargo +nightly fuzz run -s none -a "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
        -runs=10000000 -max_total_time="$secs" -print_final_stats=1 >"fuzz/logs/$t.log" 2>&1
    rc=$?
    end=$(date +%s)
    final=$(grep -E '^#[0-9]+' "fuzz/logs/$t.log" | tail -1)
    echo "$t: exit $rc, $((end - start)) s, $final"
done
