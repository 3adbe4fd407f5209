#!/usr/bin/env bash
# `carma config`: defaults are CARMA's, the shipped data/carma.conf equals them, --set and a
# config file override them, and bad keys or values are clear errors with exit status 1.
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$CARMA" config) || fail "config exits 0"
for kv in "policy = exclusive" "estimator = none" "smact_threshold = 0.8" "smocc_threshold = 0.45" \
          "drama_threshold = 0.4" "reserve_mib = 512" "margin_mib = 2048" "or_min_free_mib = 5120" \
          "window = 30" "aggregation = risk" "grace_s = 30" "retry_cap = 3"; do
    grep -qx "$kv" <<<"$out" || fail "default '$kv' missing"
done
diff -q <("$CARMA" config --config "$SRC/data/carma.conf") <("$CARMA" config) >/dev/null \
    || fail "data/carma.conf does not equal the built-in defaults"

out=$("$CARMA" config --set policy=oracle-MAGM --set margin_mib=4G) || fail "--set accepted"
grep -qx "policy = oracle-magm" <<<"$out" || fail "--set policy"
grep -qx "margin_mib = 4096" <<<"$out" || fail "--set size with unit"

printf 'policy = est-lug\nestimator = gpumemnet # trailing comment\n\nwindow=10\n' >"$tmp/ok.conf"
out=$("$CARMA" config --config "$tmp/ok.conf") || fail "good file accepted"
grep -qx "policy = est-lug" <<<"$out" || fail "file policy"
grep -qx "window = 10" <<<"$out" || fail "file window"
out=$(CARMA_CONFIG="$tmp/ok.conf" "$CARMA" config --set window=5) || fail "env config"
grep -qx "window = 5" <<<"$out" || fail "--set wins over the file"
grep -qx "estimator = gpumemnet" <<<"$out" || fail "\$CARMA_CONFIG read"

bad() { # bad DESCRIPTION EXPECTED_TEXT ARGS...
    local desc=$1 text=$2; shift 2
    local msg rc
    msg=$("$CARMA" config "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq 1 ] || fail "$desc: exit $rc, expected 1"
    case "$msg" in *"$text"*) ;; *) fail "$desc: message '$msg' lacks '$text'" ;; esac
}
bad "unknown policy" "unknown policy 'round-robin'" --set policy=round-robin
bad "unknown key" "unknown config key 'polcy'" --set polcy=exclusive
bad "MPS thread percentage over 100" "mps_active_thread_percentage: expected 0..100, got 101" \
    --set mps_active_thread_percentage=101
bad "mps not a switch" "mps: expected on or off" --set mps=maybe
bad "bad fraction" "smact_threshold: expected a fraction" --set smact_threshold=1.2
bad "bad window" "window: expected an integer >= 1" --set window=0
bad "not a pair" "expected KEY=VALUE" --set policy
bad "missing file" "nope.conf" --config "$tmp/nope.conf"
printf 'policy = oracle-ff\nthis line is wrong\n' >"$tmp/bad.conf"
bad "bad line" "bad.conf:2: expected \`key = value\`" --config "$tmp/bad.conf"
printf 'estimator = magic\n' >"$tmp/bad2.conf"
bad "bad value in file" "bad2.conf:1: estimator: unknown estimator 'magic'" --config "$tmp/bad2.conf"

[ "$fails" -eq 0 ] && echo "config cli: all checks passed"
exit "$fails"
