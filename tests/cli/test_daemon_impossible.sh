#!/usr/bin/env bash
# Requests this server can never run are refused at submission, with the server's capacity in
# the message, and nothing is stored: a per-GPU memory figure larger than every GPU, --mem 0,
# more GPUs than there are, and a figure only some of the GPUs could hold on a task needing all;
# a figure from a task file is named as the file's, not as --mem.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 2xA100-40GB --set sample_interval_s=0.2
out=$("$CARMA" submit --mem 50G -- true 2>&1); rc=$?
[ $rc -eq 1 ] || fail "--mem 50G on 40 GB GPUs should exit 1, got $rc"
grep -q "50.0 GiB exceeds the largest GPU here (40.0 GiB, GPU 0)" <<<"$out" || fail "message: $out"
out=$("$CARMA" submit --mem 0 -- true 2>&1); rc=$?
[ $rc -eq 1 ] || fail "--mem 0 should exit 1, got $rc"
grep -q -- "--mem 0" <<<"$out" || fail "--mem 0 message: $out"
# A figure from a task file is named as such, not as a --mem never given: one too large, and a
# 0 from a client that did not check the file (carma's own client refuses `memory: 0`).
printf 'command: "true"\nmemory: 50G\n' >"$tmp/big.yaml"
out=$("$CARMA" submit "$tmp/big.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "submission refused: memory figure 50.0 GiB exceeds the largest GPU" \
    <<<"$out" || fail "file's 50G: rc $rc: $out"
out=$(python3 -c 'import json, socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
t = {"command": "true", "cwd": "/", "mem": {"oracle": 0}, "source": "/x/t.yaml"}
s.sendall(json.dumps({"verb": "submit", "task": t}).encode() + b"\n")
print(json.loads(s.makefile().readline()).get("error"))' "$SOCK")
[ "$out" = "submission refused: memory figure 0 MiB: a task needs some GPU memory" ] ||
    fail "a file's memory 0: $out"
out=$("$CARMA" submit --gpus 3 -- true 2>&1); rc=$?
[ $rc -eq 1 ] || fail "--gpus 3 on 2 GPUs should exit 1, got $rc"
grep -q "asks for 3 GPUs but this server has 2" <<<"$out" || fail "--gpus message: $out"
[ "$("$CARMA" queue --all --json | jq length)" -eq 0 ] || fail "a refused submission was stored"
# What fits is still accepted: the whole GPU, on both GPUs.
id=$("$CARMA" submit --mem 40G --gpus 2 -- true) || fail "--mem 40G --gpus 2 refused"
[ "$id" = 1 ] || fail "accepted task id: $id"
stop_daemon

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
