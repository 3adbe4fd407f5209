#!/usr/bin/env bash
# Text that is not UTF-8 never goes missing silently: the protocol is JSON, which carries
# UTF-8 only. A command, directory, name or --env value that is not is refused, naming it; an
# inherited variable that is not is left out with a warning naming it (the task would have
# seen it empty). Names are cut between characters (an array's "[N]" is kept), and the
# listings' columns never split a character.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
command -v iconv >/dev/null || { echo "SKIP: needs iconv"; exit 77; }

start_daemon --sim-gpus 1xA100-40GB
utf8() { iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1; }

out=$("$CARMA" submit --hold --mem 1G -- echo $'\xfe' 2>&1) && fail "a command not in UTF-8 was taken"
grep -q "the command is not valid UTF-8" <<<"$out" || fail "command: $out"
out=$("$CARMA" submit --hold --mem 1G --name $'bad\xffname' -- true 2>&1) && fail "name taken"
grep -q "the task's name is not valid UTF-8" <<<"$out" || fail "name: $out"
out=$("$CARMA" submit --hold --mem 1G --env X=$'\xff' -- true 2>&1) && fail "--env taken"
grep -q -- "X (--env or the task file.s env) is not valid UTF-8" <<<"$out" || fail "--env: $out"
mkdir "$tmp/d"$'\xff'
out=$(cd "$tmp/d"$'\xff' && "$CARMA" submit --hold --mem 1G -- true 2>&1) && fail "cwd taken"
grep -q "the directory is not valid UTF-8" <<<"$out" || fail "cwd: $out"
[ "$("$CARMA" queue --all --json | jq length)" = 0 ] || fail "a refused task was queued"
# refused before anything runs: a Python command without --mem is traced (run) for its
# estimate, which must not happen for a task that is then refused
mkdir -m 777 "$tmp/side"
printf 'open("%s/side/ran", "w").close()\n' "$tmp" >"$tmp/side/s.py"
chmod 644 "$tmp/side/s.py"
[ "$(id -u)" -eq 0 ] && export SUDO_UID=65534 SUDO_GID=65534 # the tracer's user, as root
"$CARMA" submit --hold --name $'bad\xffname' -- python3 "$tmp/side/s.py" >/dev/null 2>&1 \
    && fail "a name not in UTF-8 was taken (python)"
[ -e "$tmp/side/ran" ] && fail "the script ran for its estimate before the task was refused"
unset SUDO_UID SUDO_GID

# inherited: left out, said; the rest of the environment goes
id=$(BADVAR=$'caf\xe9' GOODVAR=ok "$CARMA" submit --hold --mem 1G -- true 2>"$tmp/err") \
    || fail "submit with a non-UTF-8 variable inherited: $(cat "$tmp/err")"
grep -q "warning: BADVAR is not valid UTF-8: not passed to the task" "$tmp/err" \
    || fail "no warning: $(cat "$tmp/err")"
env=$(sqlite3 "$STATE/carma.db" "SELECT spec FROM tasks WHERE id = $id")
grep -q '"GOODVAR=ok"' <<<"$env" || fail "GOODVAR not passed"
grep -q BADVAR <<<"$env" && fail "BADVAR passed"

# an array's names: 139 ASCII letters and a 2-byte letter, cut before it, each with its [N]
long="$(printf 'a%.0s' {1..139})é"
ids=$("$CARMA" submit --hold --mem 1G --array 1-2 --name "$long" -- true) || fail "array"
names=$("$CARMA" queue --all --json | jq -r '.[] | select(.array_index != null) | .name')
grep -qx "$(printf 'a%.0s' {1..139})\[1\]" <<<"$names" || fail "array names: $names"
grep -qx "$(printf 'a%.0s' {1..139})\[2\]" <<<"$names" || fail "array names: $names"

# 11 characters (13 terminal cells: 名 and 前 take 2 each) and 12 rockets (4 bytes, 2 cells
# each): the 20-cell column takes 3 of them and a space
"$CARMA" submit --hold --mem 1G --name "ünïcødé-名前-$(printf '🚀%.0s' {1..12})" -- true >/dev/null \
    || fail "emoji name"
"$CARMA" queue | utf8 || fail "queue's columns split a character"
"$CARMA" queue | grep -q "ünïcødé-名前-🚀🚀🚀  $(id -un)" \
    || fail "queue's name column: $("$CARMA" queue)"
"$CARMA" gpus | utf8 || fail "gpus split a character"
stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
