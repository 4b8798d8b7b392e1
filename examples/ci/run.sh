#!/usr/bin/env bash
# The psd2-console sandbox as a CI service: start it with a seed file, wait until it is
# ready, run a test that needs SCA (completed headless with `sca complete`), stop it.
#
#   PSD2_CONSOLE=path/to/psd2-console bash examples/ci/run.sh
#
# The "test" here is `psd2-console send` itself: your own suite would send its signed
# requests where this one calls `send`, and `sca complete` the scaRedirect it gets.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
bin=${PSD2_CONSOLE:-psd2-console}
work=$(mktemp -d)
export PSD2_CONSOLE_HOME=${PSD2_CONSOLE_HOME:-$work/home}
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# 1. Start: in memory, on a free port, with the seeded customers; the ready file gets the
#    base URL once the database is migrated and seeded (GET /ready answers 200 from then).
"$bin" sandbox serve --in-memory --addr 127.0.0.1:0 \
    --seed "$here/seed.toml" --ready-file "$work/ready" 2>"$work/sandbox.log" &
pids+=($!)

# 2. Wait for ready (at most 60 s).
for _ in $(seq 600); do
    [ -s "$work/ready" ] && break
    kill -0 "${pids[0]}" 2>/dev/null || { cat "$work/sandbox.log" >&2; exit 1; }
    sleep 0.1
done
[ -s "$work/ready" ] || { echo "the sandbox did not get ready" >&2; exit 1; }
base=$(cat "$work/ready")
echo "sandbox ready at $base"
# Without --ready-file: poll `curl -fsS "$base/ready"` until it answers 200.

# 3. The TPP side: a test certificate and a profile targeting the sandbox.
"$bin" cert new --dir "$work/certs" --name tpp >/dev/null
mkdir -p "$PSD2_CONSOLE_HOME/config/profiles"
cat >"$PSD2_CONSOLE_HOME/config/profiles/ci.toml" <<PROFILE
name = "ci"
target = "$base"
certificate = "$work/certs/tpp.pem"
key = "$work/certs/tpp.key"
roles = ["PSP_AI", "PSP_PI"]
psu_ip_address = "127.0.0.1"
callback_port = 0
PROFILE

# 4. A test needing SCA: read the accounts. The bank answers with a scaRedirect; `send`
#    waits for the redirect to its TPP-Redirect-URI, then reads again with the PSU-ID.
"$bin" send accounts.list --profile ci --wait-sca >"$work/accounts.json" 2>"$work/send.log" &
send=$!
pids+=($send)
link=
for _ in $(seq 600); do
    link=$(grep -o 'https\?://[^ ]*/sca/[A-Za-z0-9_-]*' "$work/send.log" | head -1 || true)
    [ -n "$link" ] && break
    kill -0 "$send" 2>/dev/null || break
    sleep 0.1
done
[ -n "$link" ] || { cat "$work/send.log" >&2; echo "no scaRedirect" >&2; exit 1; }

# Headless SCA: log in as the seeded customer, consent to her accounts, follow the
# redirect to the TPP (exit 0 only when it got there).
"$bin" sca complete "$link" --customer 01017012345 --accounts NO0315030012345 --json \
    | tee "$work/sca.json"
grep -q '"outcome":"success"' "$work/sca.json"

wait "$send" || { cat "$work/send.log" >&2; exit 1; }
grep -q '"Brukskonto Siri"' "$work/accounts.json" \
    || { cat "$work/accounts.json" "$work/send.log" >&2; exit 1; }
echo "CI example passed"
# 5. Stop: the trap ends the sandbox.
