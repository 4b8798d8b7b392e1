#!/usr/bin/env bash
# Where the CPU of a read goes beside the RSA floor's: time-based profiles (`perf record -a -g`,
# 999 Hz, 4 s, the server's process picked out afterwards) of the floor and of `sandbox serve`
# while the reads bench (replayed mode) runs wrk against each one's `GET /v1/accounts`; prints
# each one's CPU seconds sampled, wrk's requests in the same seconds, the CPU per request and
# the top symbols (self time). Unlike callgrind's instruction counts this weighs every
# instruction by what it cost (RSA's arithmetic runs several instructions per cycle, the
# framework's branchy code about one).
#
#   benches/perf_reads.sh [output directory]     (PSD2_LOAD_BENCH_BIN: a built load bench)
#
# The bench's replayed mode runs, in order: bare axum and the floor on /v1/accounts, the two on
# the 100 KB page, then the sandbox's reads (accounts first); the server of a wrk run is the
# process listening on its URL's port.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/perf_reads.XXXXXX)}
mkdir -p "$out"
B=${PSD2_LOAD_BENCH_BIN:-}
if [ -n "$B" ]; then
    PSD2_LOAD_SECS=${PSD2_LOAD_SECS:-10} "$B" reads
else
    PSD2_LOAD_SECS=${PSD2_LOAD_SECS:-10} cargo bench --bench load -- reads
fi >"$out/bench.log" 2>&1 &
bench=$!
trap 'pkill -P $bench 2>/dev/null; kill $bench 2>/dev/null || true' EXIT

seen=" "
# Waits for the n-th new wrk run whose URL ends in $1 (counting from this call's start) and
# prints its URL's port.
next_wrk() {
    local suffix=$1 want=$2 n=0
    for _ in $(seq 1 6000); do
        for p in $(pgrep -x wrk || true); do
            case "$seen" in *" $p "*) continue ;; esac
            seen="$seen$p "
            url=$(tr '\0' '\n' </proc/$p/cmdline 2>/dev/null | grep '^http' || true)
            case "$url" in *"$suffix")
                n=$((n + 1))
                if [ $n -eq "$want" ]; then echo "$url" | sed -E 's#^https?://[^:]+:([0-9]+)/.*#\1#'; return; fi ;;
            esac
        done
        sleep 0.05
    done
    echo "no wrk run on $suffix" >&2
    exit 1
}
record() {
    local name=$1 port=$2
    ss -ltnpH "sport = :$port" | sed -E 's/.*pid=([0-9]+).*/\1/' | head -1 >"$out/$name.pid"
    sleep 1 # past wrk's connection set-up
    perf record -a -g -F 999 -o "$out/$name.data" -- sleep 4 2>/dev/null
}
report() {
    local name=$1 pid samples
    pid=$(cat "$out/$name.pid")
    samples=$(perf script -i "$out/$name.data" --pid "$pid" -F pid 2>/dev/null | grep -cE '^ *[0-9]+ *$' || true)
    echo "$name: pid $pid: $samples samples in 4 s = $(awk -v s="$samples" 'BEGIN {printf "%.2f", s / 999}') CPU s"
    perf report -i "$out/$name.data" --pid "$pid" --stdio --no-children -g none --percentage relative \
        --sort dso,sym 2>/dev/null | grep -v '^#' | grep -v '^$' | head -40 >"$out/$name.top"
}
# One wrk loop in this shell (not in a command substitution), so `seen` lasts.
next_wrk /v1/accounts 2 >"$out/port" # bare axum, then the floor
record floor "$(cat "$out/port")"
next_wrk /v1/accounts 1 >"$out/port" # the next one: the sandbox's accounts
record sandbox "$(cat "$out/port")"
# The figures of the sandbox's accounts run are printed when it ends; the rest is not needed.
for _ in $(seq 1 600); do
    grep -q "^== replayed: account details" "$out/bench.log" && break
    sleep 0.1
done
pkill -P $bench 2>/dev/null || true # its servers (the sandbox, bare axum, the floor)
kill $bench 2>/dev/null || true
trap - EXIT
report floor
report sandbox
# wrk's figures of the runs profiled: the floor's first /v1/accounts run and the sandbox's.
grep -E "^== replayed: (RSA floor, 2 KB body \(before|accounts )" -A14 "$out/bench.log" \
    | grep -E "^==|Requests/sec" || true
echo "top symbols: $out/floor.top, $out/sandbox.top"
