#!/bin/bash
# test_xmem_cli.sh — the xmem estimator from the command line: --trace on a shipped trace,
# usage errors, bad traces and time limits, and (when /usr/bin/python3 has torch) --run on
# tiny training scripts, the clear errors for scripts the tracer cannot follow, the JSON
# staying clean of the script's output, and never running a script as root (under root: as
# SUDO_UID's user, with that user's HOME, USER and LOGNAME).
# Usage: test_xmem_cli.sh /path/to/carma /path/to/source_dir
set -u
CARMA=$1
SRC=$2
export CARMA_DATA_DIR="$SRC/data"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
D="$SRC/tests/data/xmem"

source "$(dirname "$0")/expect_lib.sh"

# --trace: the parts add up to the figure (rounded up)
T="$SRC/data/gpumemnet/xmem_traces/resnet50_32.trace"
out=$("$CARMA" estimate --trace "$T" --json) || fail "--trace failed"
sum=$(printf '%s' "$out" | jq '.context_mib + .reserved_mib + .workspaces_mib + .margin_mib | ceil')
[ "$(printf '%s' "$out" | jq .mib)" = "$sum" ] || fail "parts do not add up: $out"
[ "$(printf '%s' "$out" | jq -r .estimator)" = xmem ] || fail "estimator name: $out"
expect 0 "reserved" "$CARMA" estimate --trace "$T"
expect 1 "not a carma trace" "$CARMA" estimate --trace "$D/tiny_mlp.py"
expect 1 "$D: Is a directory" "$CARMA" estimate --trace "$D"
expect 2 "needs a command" "$CARMA" estimate --run
expect 2 "at least 1" "$CARMA" estimate --run --iterations 0 -- x.py
expect 2 "do not go together" "$CARMA" estimate --run --eval -- x.py
expect 2 "--ws-band does not go with --trace" "$CARMA" estimate --ws-band 0 --trace "$T"
expect 2 "from 0 to 14" "$CARMA" estimate --fit-xmem x.csv --ws-band -1
expect 2 "--folds must be 0 (none) or 2 to 20" "$CARMA" estimate --fit-xmem x.csv --folds 1
expect 0 "xmem" "$CARMA" estimate --eval

TMP=$(mktemp -d) || exit 1
chmod 755 "$TMP" # the scripts in it run as nobody below, under root
trap 'rm -rf "$TMP"' EXIT
# steps in the singular and plural; a trace's bad end line refused with its line
printf 'carma-trace 1\na 1 1048576\ns 1\nend 1\n' >"$TMP/one.trace"
expect 0 "(1 optimizer step traced;" "$CARMA" estimate --trace "$TMP/one.trace"
expect 0 "(3 optimizer steps traced;" "$CARMA" estimate --trace "$T"
printf 'carma-trace 1\r\na 1 1048576\r\ns 1\r\nend 1\r\n' >"$TMP/crlf.trace"
expect 0 "(1 optimizer step traced;" "$CARMA" estimate --trace "$TMP/crlf.trace"
printf 'carma-trace 1\na 1 1048576\nend 0\n' >"$TMP/zero.trace"
expect 1 "zero.trace:3: 'end 0': the trace holds no optimizer step" \
    "$CARMA" estimate --trace "$TMP/zero.trace"
# a bad time limit is an error naming the variable, not the default; unset is the default
for v in 0 -1 abc "" " " 86401 inf nan 1s; do
    expect 1 "CARMA_TRACE_TIMEOUT must be a number of seconds over 0 and at most 86400" \
        env CARMA_TRACE_TIMEOUT="$v" "$CARMA" estimate --run -- "$D/tiny_mlp.py"
done

if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "note: /usr/bin/python3 has no torch (scripts/deps.sh installs it): --run not tested"
    [ "$fails" -eq 0 ] && echo "all xmem CLI tests passed" && exit 0
    exit 1
fi

if [ "$(id -u)" -eq 0 ]; then
    expect 1 "will not run a training script as root" \
        env -u SUDO_UID -u SUDO_GID "$CARMA" estimate --run -- "$D/tiny_cnn.py"
    # a SUDO_UID with no passwd entry: no home directory to run the script in
    nouid=4000000
    while getent passwd "$nouid" >/dev/null; do nouid=$((nouid + 1)); done
    expect 1 "SUDO_UID $nouid has no passwd entry" \
        env SUDO_UID=$nouid SUDO_GID=$nouid "$CARMA" estimate --run -- "$D/tiny_cnn.py"
    # as root, the tracer runs as the user sudo names: here nobody, with nobody's HOME, USER
    # and LOGNAME (not root's: the script's caches and ~/.local are the user's)
    export SUDO_UID=65534 SUDO_GID=65534
    IFS=: read -r pw_name _ _ _ _ pw_dir _ < <(getent passwd 65534)
    printf 'import os\nprint("env: HOME=%%s USER=%%s LOGNAME=%%s" %% tuple(os.environ.get(k) '\
'for k in ("HOME", "USER", "LOGNAME")))\n' >"$TMP/env.py"
    chmod 644 "$TMP/env.py"
    expect 1 "env: HOME=$pw_dir USER=$pw_name LOGNAME=$pw_name" \
        env HOME=/root USER=root LOGNAME=root "$CARMA" estimate --run -- "$TMP/env.py"
fi

out=$("$CARMA" estimate --run --iterations 2 --json -- python3 "$D/tiny_cnn.py" --batch-size 4 \
    2>/dev/null) || fail "tiny_cnn: $out"
[ "$(printf '%s' "$out" | jq .steps)" = 2 ] || fail "tiny_cnn: not 2 steps: $out"
[ "$(printf '%s' "$out" | jq .convolutions)" = true ] || fail "tiny_cnn: no convolutions: $out"
[ "$(printf '%s' "$out" | jq '.mib > .context_mib')" = true ] || fail "tiny_cnn: figure: $out"
out=$("$CARMA" estimate --run --json -- "$D/tiny_mlp.py" 2>/dev/null) || fail "tiny_mlp: $out"
[ "$(printf '%s' "$out" | jq .convolutions)" = false ] || fail "tiny_mlp: convolutions: $out"
expect 0 "(3 optimizer steps traced;" "$CARMA" estimate --run -- "$D/tiny_mlp.py"
expect 0 "(1 optimizer step traced;" "$CARMA" estimate --run --iterations 1 -- "$D/tiny_mlp.py"
expect 1 "cannot trace: operation aten._foreach_add_" \
    "$CARMA" estimate --run -- python3 "$D/unsupported_foreach.py"
expect 1 "cannot trace: mixed precision" "$CARMA" estimate --run -- "$D/unsupported_amp.py"
expect 1 "no optimizer step" "$CARMA" estimate --run -- "$D/no_step.py"
expect 1 "no such script" "$CARMA" estimate --run -- "$D/missing.py"
expect 1 "interpreter option -c" "$CARMA" estimate --run -- python3 -c "print(1)"
expect 1 "ran past 2 s" env CARMA_TRACE_TIMEOUT=2 "$CARMA" estimate --run -- "$D/hang.py"
expect 1 "ran past 1.5 s" env CARMA_TRACE_TIMEOUT=1.5 "$CARMA" estimate --run -- "$D/hang.py"

[ "$fails" -eq 0 ] && echo "all xmem CLI tests passed"
[ "$fails" -eq 0 ]
