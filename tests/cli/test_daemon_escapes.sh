#!/usr/bin/env bash
# Terminal escapes in what a user submits (task name, command) reach other users' terminals
# only made visible: `queue` and `show` print ESC as \x1b and a newline as \n, while --json
# keeps the exact strings; what a daemon says (a task's reason and state, in `history` too; an
# attempt's outcome and a field's name in `show`; a GPU's name and sources in `gpus`) is
# escaped as well (and an unknown gpu_hours shows as '-', not 0.000), and so is a GPU's name that `gpus
# --gpu-backend nvml` reads (test_gpus_direct_cli.sh). So are the controls in a task's output
# that `carma logs` shows root on a terminal (lines and tabs kept), while a pipe, and the
# owner's own terminal, get the bytes as written (this part needs root, setpriv and script(1);
# skipped without them).
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

start_daemon --sim-gpus 1xA100-40GB --set sample_interval_s=0.2
esc=$'\e'
name=$'evil\e[2J\nline2'
id=$("$CARMA" submit --name "$name" -- sleep 30) || fail "submit"
out=$("$CARMA" queue) || fail "queue"
grep -q "$esc" <<<"$out" && fail "queue printed a raw ESC: $(cat -v <<<"$out")"
grep -qF 'evil\x1b[2J\nline2' <<<"$out" || fail "queue should show the name escaped: $(cat -v <<<"$out")"
[ "$(wc -l <<<"$out")" -eq 2 ] || fail "the name's newline broke the table: $(cat -v <<<"$out")"
out=$("$CARMA" show "$id") || fail "show"
grep -q "$esc" <<<"$out" && fail "show printed a raw ESC: $(cat -v <<<"$out")"
grep -qF 'name          evil\x1b[2J\nline2' <<<"$out" || fail "show: $(cat -v <<<"$out")"
# no memory figure: one "mem  -" line, not a bare "mem:" heading
grep -qxE 'mem +-' <<<"$out" || fail "show's mem line: $(grep -A1 '^mem' <<<"$out")"
[ "$("$CARMA" show --json "$id" | jq -r .name)" = "$name" ] || fail "--json should keep the name exact"
[ "$("$CARMA" queue --json | jq -r '.[0].name')" = "$name" ] || fail "queue --json exact"
"$CARMA" cancel "$id" >/dev/null

# on_tty CMD...: CMD's output as a terminal shows it (script(1) gives it one), lines ending \n.
on_tty() { script -qec "$(printf '%q ' "$@")" /dev/null </dev/null | tr -d '\r'; }
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && command -v script >/dev/null; then
    mkdir "$tmp/work" && chown 65534:65534 "$tmp/work"
    id=$(cd "$tmp/work" && "${NOBODY[@]}" "$CARMA" submit -- printf '\033]0;TITLE\007\033[2Jline1\n\tline2\n') \
        || fail "nobody's submit"
    wait_until 10 task_is "$id" done || fail "nobody's task did not end done: $(task_state "$id")"
    raw=$(printf '\033]0;TITLE\007\033[2Jline1\n\tline2')
    out=$(on_tty "$CARMA" logs "$id")
    [ "$out" = $'\\x1b]0;TITLE\\x07\\x1b[2Jline1\n\tline2' ] \
        || fail "root's terminal should show nobody's output escaped: $(cat -A <<<"$out")"
    [ "$("$CARMA" logs "$id")" = "$raw" ] || fail "a pipe should get the output as written"
    out=$(on_tty "${NOBODY[@]}" "$CARMA" logs "$id")
    [ "$out" = "$raw" ] || fail "the owner's terminal should get its output as written: $(cat -A <<<"$out")"
else
    echo "SKIP (part): carma logs of another user's task needs root, setpriv and script"
fi
stop_daemon

# What the daemon itself says (reason, state, a GPU's name and sources) is shown escaped too: a reply is text from
# another process. A stand-in daemon (ours: the client talks to it) answers with ESC in them.
python3 -c 'import json,socket,sys
t={"id":1,"name":"n","user":"u","uid":0,"state":"queued\u001b[2J","queue":"main","attempts":0,
   "gpus":[],"ngpus":1,"reason":"wait\u001b]0;T\u0007ing","gpu_hours":None,
   "attempt_list":[{"n":1,"gpus":[0],"outcome":"fail\u001b[5med"}],"extra\u001b[6m":1}
t2={"id":2,"name":"m","user":"u","uid":0,"queue":"main","attempts":0,"gpus":[],"ngpus":1}
g={"index":0,"name":"A100\u001b[2Jx","activity_source":"sim\u001b[1m","grace":"gr\u001b[3m",
   "tasks":[1],"holds":[{"id":1,"user":"u","name":"n","mem_mib":1,"mem_source":"est\u001b[4m"}]}
s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); s.settimeout(10)
open(sys.argv[2], "w").close()
for _ in range(16):
    c,_=s.accept(); c.recv(65536)
    c.sendall((json.dumps({"ok":True,"tasks":[t,t2],"next":None,"task":t,"gpus":[g],
                           "backend":"sim","id":1,"state":t["state"]})+"\n").encode()); c.close()
' "$tmp/fake.sock" "$tmp/fake.ready" &
fake=$!
wait_until 5 test -e "$tmp/fake.ready" || fail "the stand-in daemon"
out=$("$CARMA" queue --socket "$tmp/fake.sock" 2>&1)
grep -q "$esc" <<<"$out" && fail "queue printed a daemon's raw ESC: $(cat -v <<<"$out")"
grep -qF 'wait\x1b]0;T\x07ing' <<<"$out" || fail "queue: the reason escaped: $(cat -v <<<"$out")"
out=$("$CARMA" show 1 --socket "$tmp/fake.sock" 2>&1)
grep -q "$esc" <<<"$out" && fail "show printed a daemon's raw ESC: $(cat -v <<<"$out")"
grep -qF 'wait\x1b]0;T\x07ing' <<<"$out" || fail "show: the reason escaped: $(cat -v <<<"$out")"
# an attempt's outcome and a field's name are the daemon's text too; gpu_hours null is
# unknown: '-', not 0.000
grep -qF 'fail\x1b[5med' <<<"$out" && grep -qF 'extra\x1b[6m' <<<"$out" \
    || fail "show: an attempt's outcome, a key escaped: $(cat -v <<<"$out")"
grep -qxE 'gpu_hours +-' <<<"$out" || fail "show: gpu_hours null: $(grep gpu_hours <<<"$out")"
out=$("$CARMA" history --socket "$tmp/fake.sock" 2>&1)
grep -q "$esc" <<<"$out" && fail "history printed a daemon's raw ESC: $(cat -v <<<"$out")"
grep -qF 'queued\x1b[2J' <<<"$out" || fail "history: the state escaped: $(cat -v <<<"$out")"
grep -q '^1 .* 0\.000 ' <<<"$out" && fail "history: gpu_hours null shown as 0: $out"
out=$("$CARMA" gpus --socket "$tmp/fake.sock" 2>&1)
grep -q "$esc" <<<"$out" && fail "gpus printed a daemon's raw ESC: $(cat -v <<<"$out")"
for want in 'A100\x1b[2Jx' 'sim\x1b[1m' 'gr\x1b[3m' 'est\x1b[4m'; do
    grep -qF "$want" <<<"$out" || fail "gpus: $want escaped: $(cat -v <<<"$out")"
done
out=$("$CARMA" cancel 1 --socket "$tmp/fake.sock" 2>&1)
grep -q "$esc" <<<"$out" && fail "cancel printed a daemon's raw ESC: $(cat -v <<<"$out")"
grep -qF 'queued\x1b[2J' <<<"$out" || fail "cancel: the state escaped: $(cat -v <<<"$out")"
out=$("$CARMA" wait 1 --timeout 1 --socket "$tmp/fake.sock" 2>&1)
grep -q "$esc" <<<"$out" && fail "wait printed a daemon's raw ESC: $(cat -v <<<"$out")"
grep -qF 'queued\x1b[2J' <<<"$out" || fail "wait: the state escaped: $(cat -v <<<"$out")"
# a task with no state in the reply (t2) is not counted queued, and top does not crash on it
out=$("$CARMA" top --once --socket "$tmp/fake.sock" 2>&1); rc=$?
[ $rc -eq 0 ] && grep -q '^0 queued, 2 running' <<<"$out" || fail "top --once: rc $rc: $(cat -v <<<"$out")"
kill "$fake" 2>/dev/null; wait "$fake" 2>/dev/null

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
