#!/usr/bin/env bash
# The on_finish hook: when a task ends for good the daemon runs the configured program as the
# task's owner (nobody's task: as nobody, never root), in a session of its own (never on the
# terminal the daemon may have been started from), with no signal the daemon ignores ignored,
# with the task in its environment; its
# output goes to the daemon's log, controls escaped; one that runs too long is killed at
# on_finish_timeout_s, also one that closed its output first; a cancelled queued task gets it
# too; a relative path is refused by the config.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
    echo "SKIP: this test needs root and setpriv to act as a second user (uid 65534)"
    exit 0
fi
source "$(dirname "$0")/daemon_lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

out=$("$CARMA" config --set on_finish=hook.sh 2>&1) && fail "a relative on_finish was accepted"
grep -q "on_finish: 'hook.sh' is not an absolute path" <<<"$out" || fail "message: $out"

mkdir -m 1777 "$tmp/out"
cat >"$tmp/hook.sh" <<'HOOK'
#!/bin/sh
f=/dev/null
[ -d "${0%/*}/out" ] && f="${0%/*}/out/$CARMA_TASK_ID"
echo "id=$CARMA_TASK_ID name=$CARMA_TASK_NAME user=$CARMA_TASK_USER state=$CARMA_TASK_STATE" \
     "outcome=$CARMA_TASK_OUTCOME exit=$CARMA_TASK_EXIT signal=$CARMA_TASK_SIGNAL uid=$(id -u)" \
     "own_session=$([ "$(cut -d' ' -f6 /proc/$$/stat)" = $$ ] && echo yes || echo no)" \
     "sigign=$(printf '%016x' $((0x$(sed -n 's/^SigIgn:[[:space:]]*//p' /proc/$$/status) &
                                  ~0x180000000)))" >"$f"
echo "hook says hello for $CARMA_TASK_ID ($CARMA_TASK_NAME)"
[ "$CARMA_TASK_NAME" = slowhook ] && sleep 30
[ "$CARMA_TASK_NAME" = quiethook ] && { exec >/dev/null 2>&1; sleep 30; }
exit 0
HOOK
chmod 755 "$tmp/hook.sh"
cat >"$tmp/carma.conf" <<CONF
policy = carma
sample_interval_s = 0.2
kill_grace_s = 1
on_finish = $tmp/hook.sh
on_finish_timeout_s = 1
CONF
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"
has() { [ -s "$tmp/out/$1" ]; }

mkdir "$tmp/work" && chown 65534:65534 "$tmp/work"
a=$(cd "$tmp/work" && as_nobody "$CARMA" submit --name mine -- sh -c 'exit 4')
wait_until 15 has "$a" || fail "no hook output for nobody's task $a: $(cat "$tmp/daemon.log")"
want="id=$a name=mine user=nobody state=failed outcome=failed exit=4 signal= uid=65534 own_session=yes"
# the daemon's ignored SIGPIPE is not the hook's (32 and 33, glibc's own, left out: its
# signal() refuses them, so whatever the test's caller had stays)
want="$want sigign=0000000000000000"
[ "$(cat "$tmp/out/$a" 2>/dev/null)" = "$want" ] || fail "hook env: '$(cat "$tmp/out/$a" 2>/dev/null)', expected '$want'"
wait_until 5 grep -q "on_finish for task $a: hook says hello for $a (mine)" "$tmp/daemon.log" \
    || fail "the hook's output is not in the daemon's log: $(cat "$tmp/daemon.log")"
# what the hook echoes of a name that nobody chose reaches the daemon's log (maybe root's
# terminal) with its controls made visible
e=$(cd "$tmp/work" && as_nobody "$CARMA" submit --name $'evil\e]0;T\a\e[2J' -- true)
wait_until 15 grep -qF "on_finish for task $e: hook says hello for $e (evil\x1b]0;T\x07\x1b[2J)" \
    "$tmp/daemon.log" || fail "the hook's output of $e, escaped: $(cat -v "$tmp/daemon.log")"
grep -q $'\e' "$tmp/daemon.log" && fail "a raw ESC in the daemon's log: $(cat -v "$tmp/daemon.log")"

b=$("$CARMA" submit --name blocker --mem 30G -- "$FAKEJOB" --mem 30G --seconds 30)
wait_until 10 task_is "$b" running || fail "task $b did not start"
c=$("$CARMA" submit --name slowhook --mem 30G -- "$FAKEJOB" --mem 30G --seconds 1)
"$CARMA" cancel "$c" >/dev/null
wait_until 10 has "$c" || fail "no hook for the cancelled queued task $c"
grep -q "state=cancelled outcome=cancelled exit= signal= uid=0" "$tmp/out/$c" \
    || fail "cancelled task's hook: $(cat "$tmp/out/$c")"
wait_until 10 grep -q "on_finish for task $c: killed after 1 s (on_finish_timeout_s)" "$tmp/daemon.log" \
    || fail "the slow hook was not killed: $(cat "$tmp/daemon.log")"
"$CARMA" cancel "$b" >/dev/null
wait_until 10 has "$b" || fail "no hook for the cancelled running task $b"
grep -Eq "state=cancelled outcome=cancelled (exit=143 signal=|exit= signal=15) uid=0" "$tmp/out/$b" \
    || fail "cancelled running task's hook: $(cat "$tmp/out/$b")"
# a hook that closes its output and runs on is killed at the timeout all the same
q=$("$CARMA" submit --name quiethook -- true)
wait_until 10 grep -q "on_finish for task $q: killed after 1 s (on_finish_timeout_s)" \
    "$tmp/daemon.log" || fail "the hook that closed its output ran on: $(cat "$tmp/daemon.log")"

stop_daemon
[ $fails -eq 0 ] && echo "ok: on_finish hook"
exit $((fails > 0))
