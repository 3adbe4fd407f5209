#!/bin/bash
# test_xmem_submit.sh — `carma submit` without --mem estimates a Python training command with
# xmem on the client side (as the user, cached by script, arguments and environment), and
# `carma show` names the figure's source. Needs /usr/bin/python3 with torch, else only notes it.
# Usage: test_xmem_submit.sh /path/to/carma /path/to/source_dir
set -u
CARMA=$1
SRC=$2
export CARMA_DATA_DIR="$SRC/data"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "note: /usr/bin/python3 has no torch (scripts/deps.sh installs it): not tested"
    exit 0
fi
source "$SRC/tests/cli/daemon_lib.sh"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export XDG_CACHE_HOME=$tmp/cache
[ "$(id -u)" -eq 0 ] && export SUDO_UID=65534 SUDO_GID=65534 # trace as nobody, not root
start_daemon
S="$SRC/tests/data/xmem/tiny_mlp.py"

id1=$("$CARMA" submit -- python3 "$S" 2>"$tmp/err1") || fail "submit: $(cat "$tmp/err1")"
grep -q "xmem estimate [0-9]* MiB$" "$tmp/err1" || fail "no xmem estimate: $(cat "$tmp/err1")"
# said before the script runs (it runs at submit time, --hold or not)
head -1 "$tmp/err1" | grep -q "no --mem: estimating the peak with xmem (the script runs now" \
    || fail "no notice before the trace: $(cat "$tmp/err1")"
t=$("$CARMA" show --json "$id1")
[ "$(jq -r .mem_source <<<"$t")" = xmem ] || fail "show: source is not xmem: $t"
"$CARMA" show "$id1" | grep -q "xmem" ||
    fail "show (text) does not name xmem: $("$CARMA" show "$id1")"

# the same command again: from the cache, the same figure
"$CARMA" submit -- python3 "$S" >/dev/null 2>"$tmp/err2" || fail "submit 2"
grep -q "(cached)" "$tmp/err2" || fail "not cached: $(cat "$tmp/err2")"
[ "$(sed 's/ (cached)//' "$tmp/err2")" = "$(cat "$tmp/err1")" ] || fail "cached figure differs"
# another argument is another job
"$CARMA" submit -- python3 "$S" --other >/dev/null 2>"$tmp/err3"
grep -q "(cached)" "$tmp/err3" && fail "cached across arguments"

# --mem wins, and no trace is run
"$CARMA" submit --mem 3G -- python3 "$S" >/dev/null 2>"$tmp/err4" || fail "submit --mem"
grep -q xmem "$tmp/err4" && fail "traced despite --mem: $(cat "$tmp/err4")"
# a script it cannot trace: a warning, and the task is still queued
"$CARMA" submit -- python3 "$SRC/tests/data/xmem/unsupported_amp.py" >/dev/null 2>"$tmp/err5" ||
    fail "submit of an untraceable script failed"
grep -q "warning: no xmem estimate (cannot trace: mixed precision" "$tmp/err5" ||
    fail "no clear warning: $(cat "$tmp/err5")"

stop_daemon
[ "$fails" -eq 0 ] && echo "all xmem submit tests passed"
[ "$fails" -eq 0 ]
