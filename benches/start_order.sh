#!/usr/bin/env bash
# Writes build/start-order.txt, the symbol ordering list that build.rs hands to the linker
# (`--symbol-ordering-file`, release builds): the functions the console runs from its start
# to its first frame, then those it runs while the embedded sandbox starts after it, so that
# lld lays them out together at the start of `.text` (BENCHMARKS.md, "r13/rss: RSS after
# start", issue 23).
#
#   benches/start_order.sh            # trace target/release/psd2-console, write the list
#   benches/start_order.sh --check    # how many names of the list the binary still has
#   benches/start_order.sh --add      # trace, and add the names the list does not have yet
#
# `cargo build --release` and `cargo bench` build some dependencies with other features
# (dev-dependencies unify theirs), which gives those crates, and the crates above them up
# to this package, other symbol hashes: the list carries the names of both builds, the
# first written from one, `--add` run on the other (the names of the build at hand are the
# ones lld finds; the others are skipped).
#
# Needs a release build (`cargo build --release --bin psd2-console`), valgrind (callgrind,
# callgrind_control), tmux and nm. Steps: a fresh home (PSD2_CONSOLE_HOME, a new temporary
# directory) gets one plain start (the first creates the data directory and the
# certificate); then, RUNS times (default 3), the console runs under callgrind in tmux
# 200x50 on the built-in embedded profile, as `cargo bench --bench console -- start` runs it.
# Dump 1 is taken when the console has written its first-frame instant
# (PSD2_CONSOLE_TRACE_FIRST_FRAME), dump 2 once its log (data/console.log) says its network
# started (the embedded sandbox and the callback listener, after the first frame) and 3 s
# more have passed (the event stream's subscription). The list: every function of the
# binary with a cost in a dump 1 of any run, then those new in a dump 2 (the runs differ a
# little: what a task did before or after a dump), each part in the binary's own address
# order (what sat together stays together); mangled names (`--demangle=no`), the names lld
# matches. Functions of the shared libraries (glibc) are not in the binary and not listed.
#
# Names carry the hashes of legacy mangling, which depend on the crate's metadata (package,
# version, profile, features, rustc version), not on the code: a change to one function
# keeps the others' names, except the `.llvm.<hash>` suffix ThinLTO gives a local function
# it exports from its codegen unit (about one name in ten), which changes with that unit's
# code. A name the binary no longer has is skipped by lld (build.rs passes
# `--no-warn-symbol-ordering`); run this again after larger changes, `--check` tells.
#
# Extra environment: BIN (another binary, default target/release/psd2-console), OUT (keep the
# dumps in this directory; default a new temporary one, removed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${BIN:-target/release/psd2-console}
list=build/start-order.txt

if [ "${1:-}" = "--check" ]; then
    total=$(grep -c . "$list")
    found=$(nm --defined-only "$bin" | awk '{print $3}' | sort -u | comm -12 - <(sort -u "$list") | wc -l)
    echo "$found of $total names of $list are symbols of $bin"
    exit 0
fi

runs=${RUNS:-3}
keep=${OUT:-}
out=${OUT:-$(mktemp -d /tmp/start_order.XXXXXX)}
mkdir -p "$out"
home="$out/home"
trace="$out/first-frame"
sock="start-order-$$"
tm() { tmux -L "$sock" "$@"; }
cleanup() {
    tm kill-server 2>/dev/null || true
    if [ -z "$keep" ]; then rm -rf "$out"; fi
}
trap cleanup EXIT

start() { # $1: command prefix (empty or valgrind ...)
    rm -f "$trace"
    tm new-session -d -s s -x 200 -y 50 \
        "exec env PSD2_CONSOLE_FREE_PORTS=1 PSD2_CONSOLE_HOME='$home' PSD2_CONSOLE_TRACE_FIRST_FRAME='$trace' $1 '$(realpath "$bin")'"
    for _ in $(seq 1 1200); do
        if [ -s "$trace" ]; then return 0; fi
        sleep 0.1
    done
    echo "no first frame after 120 s" >&2
    tm capture-pane -p -t s >&2 || true
    exit 1
}

# The first start creates the data directory and the certificate.
start ""
sleep 2
tm kill-server
sleep 0.5

# Functions of the binary with a cost in one dump file: `ob=` names the object of the `fn=`
# lines after it (and `cob=`/`cfn=` a callee, whose own block comes with its own `fn=`);
# callgrind's recursion marks (`'2`) are not part of the name.
functions() {
    awk -v bin="$(realpath "$bin")" '
        /^ob=/ { ob = substr($0, 4) }
        /^fn=/ { if (ob == bin) { f = substr($0, 4); sub(/\047[0-9]+$/, "", f); print f } }
    ' "$1" | sort -u
}

# The embedded sandbox is up when the console's log says so (a line per start).
started() { grep -c "console: network started" "$home/data/console.log" || true; }
: >"$out/part1"
: >"$out/part2"
for run in $(seq 1 "$runs"); do
    before=$(started)
    start "valgrind --tool=callgrind --dump-instr=no --compress-strings=no --compress-pos=no --demangle=no --callgrind-out-file=$out/cg$run.out"
    pid=$(tm display-message -p -t s '#{pane_pid}')
    callgrind_control -d "$pid" >/dev/null 2>&1
    for _ in $(seq 1 1200); do
        if [ "$(started)" -gt "$before" ]; then break; fi
        sleep 0.1
    done
    if [ "$(started)" -le "$before" ]; then
        echo "the embedded sandbox did not start in 120 s" >&2
        exit 1
    fi
    sleep 3
    callgrind_control -d "$pid" >/dev/null 2>&1
    tm kill-server
    sleep 1
    if [ ! -f "$out/cg$run.out.1" ] || [ ! -f "$out/cg$run.out.2" ]; then
        echo "expected two dumps in $out, found: $(ls "$out")" >&2
        exit 1
    fi
    functions "$out/cg$run.out.1" | sort -u - "$out/part1" -o "$out/part1"
    functions "$out/cg$run.out.2" | sort -u - "$out/part2" -o "$out/part2"
done
comm -23 "$out/part2" "$out/part1" >"$out/part2.new"
mv "$out/part2.new" "$out/part2"
# Address order of the binary: nm -n lists symbols by address.
nm -n --defined-only "$bin" | awk '{print $3}' >"$out/by-address"
in_order() { awk 'NR == FNR { want[$0] = 1; next } ($0 in want) && !seen[$0]++' "$1" "$out/by-address"; }
mkdir -p build
{
    if [ "${1:-}" = "--add" ]; then cat "$list"; fi
    in_order "$out/part1"
    in_order "$out/part2"
} | awk '!seen[$0]++' >"$list.tmp"
mv "$list.tmp" "$list"
echo "$list: $(wc -l <"$out/part1") functions to the first frame, $(wc -l <"$out/part2") more while the sandbox starts; $(wc -l <"$list") names written"
