#!/usr/bin/env bash
# Why a queued task waits (sim backend, one 40 GB GPU, the carma policy): a 30 GB task behind
# a running 30 GB one is told that no GPU has the memory for its figure (with the most room
# there is), a task with no memory figure that it waits for an idle GPU; `queue` shows the
# REASON column, `show` and `--json` the reason and its code; a running task has none.
# `gpus` shows what each GPU holds (id, user, name escaped, figure: "given" for --mem) and the ledger's commitment;
# `top` shows both live (one frame with --once), escaped, until Ctrl-C.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"

cat >"$tmp/carma.conf" <<CONF
policy = carma
margin_mib = 512
sample_interval_s = 0.2
kill_grace_s = 1
CONF
start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf"

a=$("$CARMA" submit --mem 30G --name "$(printf 'big\033[2Jone')" -- "$FAKEJOB" --mem 30G --seconds 60)
wait_until 10 task_is "$a" running || fail "task $a did not start"
# gpus: what GPU 0 holds, and what the ledger has committed there (30 GB + 512 margin)
g=$("$CARMA" gpus --json)
jq -e --argjson a "$a" '.[0].holds[0] | .id == $a and .mem_mib == 30720 and
    .mem_source == "oracle" and .user == "root"' <<<"$g" >/dev/null || fail "gpus --json holds: $g"
[ "$(jq '.[0].committed_mib' <<<"$g")" = 31232 ] || fail "gpus --json committed_mib: $g"
out=$("$CARMA" gpus)
grep -Eq "^0 .* 31232 +$a\$" <<<"$out" || fail "gpus: committed column: $out"
grep -qF "    task $a" <<<"$out" && grep -qF 'big\x1b[2Jone' <<<"$out" \
    || fail "gpus: the task line, its name escaped: $(cat -v <<<"$out")"
# the protocol's "oracle" (a figure the submitter gave) reads "given" in text
grep -qF "figure 30720 MiB (given)" <<<"$out" || fail "gpus: the figure's source: $out"
"$CARMA" show "$a" | grep -q "^memory  *30720 MiB (given), peak" \
    || fail "show $a: the figure's source: $("$CARMA" show "$a")"
grep -q $'\033' <<<"$out" && fail "gpus: an escape reached the terminal"
h=$("$CARMA" submit --mem 30G -- "$FAKEJOB" --mem 30G --seconds 1)
n=$("$CARMA" submit -- "$FAKEJOB" --seconds 1)
sleep 0.5
code() { "$CARMA" show "$1" --json | jq -r .reason_code; }
[ "$(code "$h")" = memory ] || fail "task $h: reason_code $(code "$h"), expected memory"
want="no GPU has 30.5 GiB free for its figure (most: GPU 0, 9.0 GiB)"
got=$("$CARMA" show "$h" --json | jq -r .reason)
[ "$got" = "$want" ] || fail "task $h: reason '$got', expected '$want'"
"$CARMA" show "$h" | grep -q "^reason  *$want\$" || fail "show $h: no reason line: $("$CARMA" show "$h")"
[ "$(code "$n")" = idle_gpus ] || fail "task $n (no figure): reason_code $(code "$n")"
"$CARMA" queue | grep -q "^$n .*waiting for 1 idle GPU (0 idle)\$" \
    || fail "queue: task $n's REASON: $("$CARMA" queue)"
"$CARMA" queue | head -1 | grep -q "REASON\$" || fail "queue: no REASON column"
[ "$("$CARMA" queue --json | jq -r ".[] | select(.id == $a) | .reason")" = null ] \
    || fail "a running task has no reason"

# top: one frame with the GPUs, their tasks and the queue with reasons; live until SIGINT
out=$("$CARMA" top --once)
grep -q "^carma top " <<<"$out" && grep -q "^GPU .*COMMITTED" <<<"$out" \
    && grep -Eq '^GPU 0   mem \[#{15}\.{5}\]  7[0-9]%   SM \[' <<<"$out" \
    && grep -qF "    task $a" <<<"$out" && grep -qF 'big\x1b[2Jone' <<<"$out" \
    && grep -q "^2 queued, 1 running" <<<"$out" && grep -q "^$n .*waiting for 1 idle GPU" <<<"$out" \
    || fail "top --once: $(cat -v <<<"$out")"
grep -q $'\033' <<<"$out" && fail "top --once: an escape sequence in a frame"
[ "$("$CARMA" top --once --json | jq '(.gpus | length) + (.tasks | length)')" = 4 ] \
    || fail "top --once --json: $("$CARMA" top --once --json)"
"$CARMA" top --json 2>/dev/null; [ $? -eq 2 ] || fail "top --json without --once: exit 2"
"$CARMA" top --interval 0.2 </dev/null >"$tmp/top" 2>&1 &
top_pid=$!
sleep 1
kill -INT "$top_pid"
wait "$top_pid" || fail "top did not end cleanly on SIGINT"
[ "$(grep -c "carma top " "$tmp/top")" -ge 2 ] || fail "top redraws: $(cat -v "$tmp/top" | head)"
# into a file or a pipe, as top -b: whole frames after a blank line, no escape sequence, and
# the header promises no q (the input is not a terminal); q on a piped input quits
grep -q $'\033' "$tmp/top" && fail "top into a file: escape sequences: $(cat -v "$tmp/top" | head)"
grep -B1 "^carma top " "$tmp/top" | sed -n 3p | grep -qx "" \
    || fail "top into a file: no blank line between frames: $(head -20 "$tmp/top")"
grep -q "q quits" "$tmp/top" && fail "top into a file says q quits"
(sleep 0.5; printf q) | timeout 10 "$CARMA" top --interval 0.2 >"$tmp/top_q"
[ $? -eq 0 ] || fail "q on a piped input did not end top: $(head -3 "$tmp/top_q")"
# a piped input's other bytes are no keys: each does not draw a frame at once (a piped file
# would flood the daemon with requests), the interval still holds
(head -c 500 /dev/zero | tr '\0' x; sleep 3) | timeout 1.5 "$CARMA" top --interval 1 >"$tmp/top_x"
n=$(grep -c "carma top " "$tmp/top_x")
[ "$n" -le 3 ] || fail "top drew $n frames in 1.5 s at --interval 1 from a piped input's bytes"
# on a terminal too short for the queue (11 rows: the header, GPU 0 with its task, one row of
# the queue), top says that it cut the queue and counts only what it shows (q quits)
# (script(1) is util-linux's, in every Debian)
short_tty="stty rows 11 cols 150; $(printf '%q' "$CARMA") top --interval 0.2"
(sleep 1; printf q) | timeout 20 script -qec "$short_tty" /dev/null >"$tmp/top_tty" 2>&1 \
    || fail "top on a short terminal: $(cat -v "$tmp/top_tty")"
last=$(tr -d '\r' <"$tmp/top_tty" | grep -a "queued, " | tail -1)
grep -aq $'\033\[H\033\[2J' "$tmp/top_tty" || fail "top clears the terminal between frames"
grep -aq "every 0.2s, q quits" "$tmp/top_tty" || fail "top on a terminal: the header names q"
[ "$last" = "1 queued, 0 running shown (cut to the terminal)" ] \
    || fail "top on a short terminal: '$last': $(cat -v "$tmp/top_tty" | tail -5)"

"$CARMA" cancel "$a" >/dev/null
wait_until 15 task_is "$h" running || wait_until 1 task_is "$h" done \
    || fail "task $h did not start once the GPU emptied: $("$CARMA" show "$h" --json | jq -c '{state, reason}')"

stop_daemon
[ $fails -eq 0 ] && echo "ok: pending reasons in queue and show"
exit $((fails > 0))
