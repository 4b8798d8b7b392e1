#!/usr/bin/env bash
# System calls and CPU time per request of the RSA floor, bare axum and two reads of
# `sandbox serve` (`GET /v1/accounts`, balances), taken while the load bench's reads scenario
# (replayed mode) runs wrk against each (BENCHMARKS.md, "r14/reads"). Counts do not depend on
# the machine's load; the CPU per request depends on it little, and the floor's is taken in
# the same minute.
#
#   benches/sys_reads.sh [output directory]
#
# Environment: PSD2_LOAD_BENCH_BIN (a built load bench, default the newest
# target/release/deps/load-*), PSD2_LOAD_BIN (the psd2-console binary the bench serves),
# PSD2_LOAD_SECS (seconds per wrk run, default 10, 14 with PERF_RECORD; the windows below
# need 9 and 13), PERF_RECORD=1 (then (C) 4 s of `perf record -g -F 1999 -p` per server:
# <name>.perf.data; no hardware counters on this VM, so the samples are CPU-clock time).
#
# Per server, while its wrk run goes on: 1 s past wrk's connection set-up, then (A) 4 s with
# only `syscalls:sys_enter_writev` counted (one `writev` per answer: the request count) and
# the process's user and system CPU from /proc/<pid>/stat (10 ms ticks), then (B) 3 s with
# every system call counted (`raw_syscalls:sys_enter`) and those a request may make by name (`perf stat -p`; the tracepoints cost the
# process some CPU, which is why window A measures the CPU without them). Window A also
# counts the kernel's software events (no hardware counters needed): context switches, CPU
# migrations and page faults of every thread, and takes each thread's CPU from
# /proc/<pid>/task/*/stat (second table: the threads that ran, by name). Needs perf with
# tracepoint access (root or perf_event_paranoid ≤ 1).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-$(mktemp -d /tmp/sys_reads.XXXXXX)}
mkdir -p "$out"
B=${PSD2_LOAD_BENCH_BIN:-$(ls -t target/release/deps/load-* | grep -v "\.d$" | head -1)}
PSD2_LOAD_SECS=${PSD2_LOAD_SECS:-$([ -n "${PERF_RECORD:-}" ] && echo 14 || echo 10)} PSD2_LOAD_UNIQUE_SECS=1 "$B" reads >"$out/bench.log" 2>&1 &
bench=$!
trap 'pkill -P $bench 2>/dev/null; kill $bench 2>/dev/null || true' EXIT

seen=" "
# Waits for the n-th new wrk run of this bench whose URL ends in $1 (counting from this call's start) and
# prints its URL's port.
next_wrk() {
    local suffix=$1 want=$2 n=0
    for _ in $(seq 1 12000); do
        # Only this bench's wrk runs (other benches may run on the machine).
        for p in $(pgrep -x -P "$bench" wrk || true); do
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
# Window B's events: every system call (raw_syscalls) and those a request may make by name
# (attaching all 700 syscalls:* tracepoints takes longer than a wrk run).
events=raw_syscalls:sys_enter
for c in writev write sendto sendmsg recvfrom read readv futex epoll_wait epoll_ctl sched_yield \
    mmap munmap madvise mprotect brk accept4 close shutdown setsockopt ioctl getrandom \
    clock_nanosleep nanosleep rt_sigprocmask; do
    events="$events,syscalls:sys_enter_$c"
done
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
# Every thread's id, name and CPU ticks (user + system).
threads() {
    local t
    for t in /proc/$1/task/*; do
        awk -v id="${t##*/}" '{c = $0; sub(/^[^(]*\(/, "", c); sub(/\).*/, "", c); gsub(/ /, "_", c); sub(/^.*\) /, ""); split($0, f, " "); print id, c, f[12] + f[13]}' "$t/stat" 2>/dev/null
    done
}
measure() {
    local name=$1 port=$2 pid
    pid=$(ss -ltnpH "sport = :$port" | sed -E 's/.*pid=([0-9]+).*/\1/' | head -1)
    echo "$pid" >"$out/$name.pid"
    sleep 1
    read -r u0 s0 < <(ticks "$pid")
    threads "$pid" >"$out/$name.threads0"
    perf stat -x, -o "$out/$name.a.csv" -e syscalls:sys_enter_writev,context-switches,cpu-migrations,page-faults -p "$pid" -- sleep 4 2>/dev/null
    read -r u1 s1 < <(ticks "$pid")
    threads "$pid" >"$out/$name.threads1"
    echo "$((u1 - u0)) $((s1 - s0))" >"$out/$name.ticks"
    perf stat -x, -o "$out/$name.b.csv" -e "$events" -p "$pid" -- sleep 3 2>/dev/null
    if [ -n "${PERF_RECORD:-}" ]; then
        perf record -F 1999 -g -p "$pid" -o "$out/$name.perf.data" -- sleep 4 >/dev/null 2>&1
    fi
    echo "$name: pid $pid ($(cat /proc/$pid/comm 2>/dev/null || echo gone)), windows ended $(date +%T)"
}
next_wrk /v1/accounts 1 >"$out/port"
measure axum "$(cat "$out/port")"
next_wrk /v1/accounts 1 >"$out/port"
measure floor "$(cat "$out/port")"
# The reads: the next run on the path whose server is `sandbox serve` (the floor runs on
# /v1/accounts just before each read too).
# (Not in a command substitution: next_wrk's record of the runs seen must last.)
next_sandbox_wrk() {
    local pid
    for _ in $(seq 1 40); do
        next_wrk "$1" 1 >"$out/port"
        pid=$(ss -ltnpH "sport = :$(cat "$out/port")" | sed -E 's/.*pid=([0-9]+).*/\1/' | head -1)
        if [ "$(cat /proc/$pid/comm 2>/dev/null)" = psd2-console ]; then return; fi
    done
    echo "no sandbox run on $1" >&2
    exit 1
}
next_sandbox_wrk /v1/accounts
measure accounts "$(cat "$out/port")"
next_sandbox_wrk /balances
measure balances "$(cat "$out/port")"
pkill -P $bench 2>/dev/null || true
kill $bench 2>/dev/null || true
trap - EXIT

hz=$(getconf CLK_TCK)
printf '| server | answers in 4 s | user µs/req | system µs/req | CPU µs/req | context switches/req | migrations/req | page faults/req | syscalls/req (B) | of which |\n|---|---|---|---|---|---|---|---|---|---|\n'
for name in axum floor accounts balances; do
    n=$(awk -F, '/sys_enter_writev/ {print $1}' "$out/$name.a.csv")
    sw=$(awk -F, -v n="$n" '$3 == "context-switches" {c = $1} $3 == "cpu-migrations" {m = $1} $3 == "page-faults" {f = $1} END {printf "%.3f | %.3f | %.3f", c / n, m / n, f / n}' "$out/$name.a.csv")
    read -r u s <"$out/$name.ticks"
    # Window B: per answer (its own writev count), every syscall with ≥ 0.01 per answer.
    nb=$(awk -F, '/sys_enter_writev,/ {print $1}' "$out/$name.b.csv")
    detail=$(awk -F, -v n="$nb" '$3 == "raw_syscalls:sys_enter" {t = $1} $3 ~ /^syscalls:sys_enter_/ && $1 / n >= 0.01 {sub("syscalls:sys_enter_", "", $3); printf "%s %.2f, ", $3, $1 / n} END {printf "| %.2f", t / n}' "$out/$name.b.csv")
    total=${detail##*| }
    detail=${detail%| *}
    awk -v name="$name" -v n="$n" -v u="$u" -v s="$s" -v hz="$hz" -v total="$total" -v d="${detail%, }" -v sw="$sw" \
        'BEGIN {printf "| %s | %d | %.1f | %.1f | %.1f | %s | %s | %s |\n", name, n, u / hz * 1e6 / n, s / hz * 1e6 / n, (u + s) / hz * 1e6 / n, sw, total, d}'
done
# The threads that ran in window A: CPU µs per answer by thread name (threads of one name summed).
printf '\n| server | threads | CPU µs/req by thread (window A) |\n|---|---|---|\n'
for name in axum floor accounts balances; do
    n=$(awk -F, '/sys_enter_writev/ {print $1}' "$out/$name.a.csv")
    awk -v name="$name" -v n="$n" -v hz="$hz" 'FNR == NR {a[$1] = $3; next} {d[$2] += $3 - ($1 in a ? a[$1] : 0); k++} END {s = ""; for (c in d) if (d[c] > 0) s = s sprintf("%s %.1f, ", c, d[c] / hz * 1e6 / n); printf "| %s | %d | %s |\n", name, k, substr(s, 1, length(s) - 2)}' \
        "$out/$name.threads0" "$out/$name.threads1"
done
echo "raw counts and the bench's log: $out"
