#!/usr/bin/env bash
# Instructions per request (callgrind, user space, every thread) of the RSA floor and of each
# AIS read of `sandbox serve`, independent of the machine's load (BENCHMARKS.md, "Issue 23:
# where the read's microseconds went").
#
#   benches/instr_reads.sh [seconds per wrk run, default 3]
#
# Needs a release build of the load bench (`cargo bench --bench load --no-run`), valgrind and
# wrk. Steps: (1) the floor (the bench binary's bare axum + one RSA-2048 verification per
# request) under callgrind, wrk -t1 -c64 with headers of the size a read sends, counters zeroed
# before and dumped after the run; (2) the bench's reads scenario with the sandbox under
# callgrind (`PSD2_LOAD_WRAP`, `PSD2_LOAD_CALLGRIND=1`: one dump per read). Each figure is the
# dump's instructions (Ir) divided by the number of RSA-2048 verifications in it (calls of
# aws-lc's RSA_verify: exactly one per request the server verified in the window, whether or
# not wrk counted it); the requests in flight when the dump is taken add part of their other
# work, about 1 % at a few hundred requests. The bench runs both modes of its reads scenario:
# first every read replayed (one signed request, `--allow-replays`), then every read with the
# replay check on (unique pre-signed requests, `PSD2_LOAD_UNIQUE_SECS` per run), one server
# process each; the table lists them in that order. Extra environment: PSD2_LOAD_BIN (another
# psd2-console binary), LOAD_BENCH (another load bench binary), OUT (directory for the dumps,
# default a new temporary one), CALLGRIND_ARGS (more valgrind options for both servers, e.g.
# `--cache-sim=yes`: the table then gives simulated cache misses per request too). Besides
# the totals, the table gives each server's instructions outside RSA_verify (the total less
# the inclusive cost of its calls): the part that runs at a few instructions per ns, where
# the sandbox's extra is (BENCHMARKS.md, "r18/reads").
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
out=${OUT:-$(mktemp -d /tmp/instr_reads.XXXXXX)}
mkdir -p "$out"
bench=${LOAD_BENCH:-$(ls -t target/release/deps/load-* | grep -v "\.d$" | head -1)}
echo "bench binary $bench, dumps in $out"

# (1) The floor, with a TPP certificate of its own.
sign_bin=${PSD2_LOAD_BIN:-target/release/psd2-console}
"$sign_bin" cert new --dir "$out" --force >/dev/null
port=$((20000 + RANDOM % 20000))
PSD2_LOAD_BARE_AXUM=$port PSD2_LOAD_BARE_AXUM_RSA=1 PSD2_LOAD_FLOOR_CERT="$out/tpp.pem" valgrind --tool=callgrind ${CALLGRIND_ARGS:-} \
    --callgrind-out-file="$out/floor.%p" "$bench" >/dev/null 2>"$out/floor.valgrind.log" &
floor=$!
for _ in $(seq 1 600); do
    if (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then break; fi
    sleep 0.1
done
# A read's headers, signed for real (the floor verifies the signature with the certificate's
# key, as `benches/load.rs` runs it): Date, X-Request-ID, PSU-ID, TPP-Redirect-URI, the
# certificate and the Signature.
hdrs=()
while IFS= read -r line; do hdrs+=(-H "$line"); done < <(
    "$sign_bin" sign --cert "$out/tpp.pem" --key "$out/tpp.key" --method GET --path /v1/accounts \
        --header "X-Request-ID: 99391c7e-ad88-49ec-a2ad-99ddcb1f7721" \
        --header "PSU-ID: 00000000000" --header "TPP-Redirect-URI: https://tpp.example/cb"
    printf '%s\n' "X-Request-ID: 99391c7e-ad88-49ec-a2ad-99ddcb1f7721" "PSU-ID: 00000000000" \
        "TPP-Redirect-URI: https://tpp.example/cb")
callgrind_control -z $floor >/dev/null
wrk -t1 -c64 -d${secs}s --latency "${hdrs[@]}" "http://127.0.0.1:$port/v1/accounts" >"$out/floor.wrk"
callgrind_control -d $floor >/dev/null
kill $floor
wait $floor 2>/dev/null || true
# Instructions of a dump, and its calls of aws-lc's RSA_verify: one per verified request, so
# Ir / calls is per request even for requests wrk sent before the dump and did not count.
tally() {
    python3 - "$@" <<'PY'
import collections, re, sys
def tally(path):
    ids, calls, ir, pending, incl, events, summary = set(), 0, 0, False, 0, ["Ir"], []
    after_call = False
    for line in open(path, errors="replace"):
        if line.startswith("events:"):
            events = line.split()[1:]
        if line.startswith("summary:"):
            summary = [int(x) for x in line.split()[1:]]
            ir = summary[0]
        if after_call:
            # The line after a call's `calls=` holds the call's inclusive cost (Ir first).
            incl += int(line.split()[1])
            after_call = False
            continue
        m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.rstrip("\n"))
        if m:
            if m.group(3) is not None and re.search(r"RSA_verify$", m.group(3)):
                ids.add(m.group(2))
            pending = m.group(1) == "cfn" and m.group(2) in ids
            continue
        if pending and line.startswith("calls="):
            calls += int(line.split("=")[1].split()[0])
            after_call = True
        pending = False
    n = max(calls, 1)
    # With --cache-sim=yes: simulated misses per request (first-level instruction and data,
    # last level both).
    ev = collections.defaultdict(int, zip(events, summary))
    sim = ("%.0f %.0f %.0f" % (ev["I1mr"] / n, (ev["D1mr"] + ev["D1mw"]) / n,
                                (ev["ILmr"] + ev["DLmr"] + ev["DLmw"]) / n)) if "I1mr" in ev else "- - -"
    return ir, calls, ir // n, (ir - incl) // n, sim
for path in sys.argv[1:]:
    print(*tally(path))
PY
}
read -r f_ir f_n f_per f_own f_i1 f_d1 f_ll < <(tally "$(ls "$out"/floor.*.1 | head -1)")
echo "floor: $f_ir Ir / $f_n RSA verifications = $f_per Ir/request, $f_own outside RSA_verify (wrk counted $(grep ' requests in ' "$out/floor.wrk" | awk '{print $1}'))"

# (2) The reads.
# One pair per read (PSD2_LOAD_PAIRS, default 1 here): counts need no median, and each pair
# would be one more dump per read under callgrind (they are named in order all the same).
PSD2_LOAD_SECS=$secs PSD2_LOAD_CALLGRIND=1 PSD2_LOAD_PAIRS=${PSD2_LOAD_PAIRS:-1} \
    PSD2_LOAD_WRAP="valgrind --tool=callgrind ${CALLGRIND_ARGS:-} --callgrind-out-file=$out/sandbox.%p" \
    "$bench" reads >"$out/reads.txt" 2>&1
# One name per dump, in the order the runs were made: each read's line after its run
# (`== replayed: <read> `GET …`` or `== unique: <read> `GET …``), and before a read's last
# unique run a line for each run that got through its pre-signed requests and was made
# again (`wrk got through`: that run's dump is skipped, `-`).
mapfile -t names < <(grep -E '^== (replayed|unique): ([^`]*`GET|.*wrk got through)' "$out/reads.txt" |
    sed -E -e 's/^== [a-z]+: .*wrk got through.*/-/' -e 's/^== ([a-z]+): ([^`]*) `.*/\2 (\1)/')
# The replayed mode's server, then the unique mode's (two processes), each's dumps in the order
# they were written (not by process id: ids wrap).
dumps=$(ls -tr "$out"/sandbox.*.* 2>/dev/null | grep -E '\.[0-9]+\.[0-9]+$')
echo "| read | Ir/request | floor Ir/request | read / floor | Ir/request outside RSA_verify (× the floor's) | simulated I1 / D1 / LL misses per request (CALLGRIND_ARGS=--cache-sim=yes) | RSA verifications in the dump |"
echo "|---|---|---|---|---|---|---|"
echo "| the floor | $f_per | $f_per | 1.00 | $f_own (1.00) | $f_i1 / $f_d1 / $f_ll | $f_n |"
i=0
for d in $dumps; do
    read -r ir n per own i1 d1 ll < <(tally "$d")
    [ "$n" -gt 0 ] || break
    if [ "${names[$i]:-?}" = "-" ]; then
        i=$((i + 1))
        continue
    fi
    printf '| %s | %d | %d | %s | %d (%s) | %s / %s / %s | %d |\n' "${names[$i]:-?}" "$per" "$f_per" "$(awk -v a=$per -v b=$f_per 'BEGIN {printf "%.3f", a / b}')" "$own" "$(awk -v a=$own -v b=$f_own 'BEGIN {printf "%.2f", a / b}')" "$i1" "$d1" "$ll" "$n"
    i=$((i + 1))
done
