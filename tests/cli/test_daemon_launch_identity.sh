#!/usr/bin/env bash
# What a task of another user inherits from a root daemon: that user's identity whole (uid and
# gid, real, effective, saved and filesystem, and every supplementary group, even past 256: the
# user database seen here, in a mount namespace of the test's own, puts nobody in 300 more), no
# capability, no signal blocked or ignored, no descriptor of the daemon's (its socket,
# database, lock, nor one it inherited open), the umask and the soft descriptor limit the
# daemon was started with (it raises its own), and no
# way to signal its supervisor or the daemon; its on_finish hook has every group too. Needs
# root, setpriv and unshare: skipped otherwise.
set -u
CARMA=$1
if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null || ! unshare -m true 2>/dev/null
then
    echo "SKIP: this test needs root, setpriv and unshare (to act as nobody, in 300 groups)"
    exit 77
fi
# Re-run in a mount namespace of its own, where /etc/group puts nobody in 300 more groups.
if [ -z "${CARMA_TEST_IN_NS:-}" ]; then
    groups=$(mktemp)
    trap 'rm -f "$groups"' EXIT
    cp /etc/group "$groups"
    for i in $(seq 1 300); do echo "carmatest$i:x:$((52000 + i)):nobody"; done >>"$groups"
    chmod 644 "$groups"
    CARMA_TEST_IN_NS=1 unshare -m --propagation private \
        sh -c 'mount --bind "$1" /etc/group || { echo "SKIP: no bind mount"; exit 77; }
               shift && exec bash "$@"' sh "$groups" "$0" "$@"
    exit $?
fi
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
want_groups=$(id -G nobody | tr ' ' '\n' | sort -n | tr '\n' ' ')
if [ "$(wc -w <<<"$want_groups")" -lt 301 ]; then
    echo "SKIP: the user database does not show the test's groups (a cache?): $want_groups"
    exit 77
fi

# the task's on_finish hook runs as its owner with all of their groups too
mkdir -m 1777 "$tmp/hookout"
printf '#!/bin/sh\nid -G | wc -w >"%s/hookout/$CARMA_TASK_ID"\n' "$tmp" >"$tmp/hook.sh"
chmod 755 "$tmp/hook.sh"
printf 'sample_interval_s = 0.2\ngrace_s = 0.2\nkill_grace_s = 1\non_finish = %s\n' \
    "$tmp/hook.sh" >"$tmp/carma.conf"
# a descriptor the daemon inherited open (not close-on-exec), and a umask of its starter's
exec 7<"$tmp/carma.conf"
# and a soft descriptor limit below the hard one, which the daemon raises for itself only
hard=$(ulimit -Hn)
soft=1000
[ "$hard" != unlimited ] && [ "$hard" -le $soft ] && soft=$((hard / 2))
(umask 027 && ulimit -Sn $soft && start_daemon --sim-gpus 1xA100-40GB --config "$tmp/carma.conf")
DAEMON_PID=$(pgrep -f -- "--state $STATE" | head -1)
exec 7<&-
ended() { "$CARMA" show --json "$1" | jq -e '.state != "queued" and .state != "running"'; }

cat >"$tmp/probe.sh" <<'SH'
#!/bin/sh
grep -E '^(Uid|Gid|Groups|CapPrm|CapEff|CapAmb|SigBlk|SigIgn):' /proc/self/status
for f in /proc/$$/fd/*; do printf 'fd %s ' "${f##*/}"; readlink "$f" || echo closed; done
echo "umask: $(umask)"
echo "nofile: $(ulimit -Sn)"
kill -0 "$PPID" 2>/dev/null && echo "signalled the supervisor"
kill -0 "$DAEMON" 2>/dev/null && echo "signalled the daemon"
true
SH
chmod 755 "$tmp/probe.sh"
id=$(cd "$tmp" && DAEMON=$DAEMON_PID as_nobody "$CARMA" submit -- "$tmp/probe.sh") \
    || fail "nobody's submit"
wait_until 10 ended "$id" || fail "task $id did not end"
out=$("$CARMA" logs "$id")
field() { sed -n "s/^$1:[[:space:]]*//p" <<<"$out" | tr -s ' \t' ' ' | sed 's/ $//'; }
[ "$(field Uid)" = "65534 65534 65534 65534" ] || fail "Uid: $(field Uid)"
[ "$(field Gid)" = "65534 65534 65534 65534" ] || fail "Gid: $(field Gid)"
got_groups=$(field Groups | tr ' ' '\n' | sort -n | tr '\n' ' ')
[ "$got_groups" = "$want_groups" ] \
    || fail "the task has $(wc -w <<<"$got_groups") groups, nobody $(wc -w <<<"$want_groups")"
for cap in CapPrm CapEff CapAmb; do
    [ "$(field $cap)" = 0000000000000000 ] || fail "$cap: $(field $cap)"
done
[ "$(field SigBlk)" = 0000000000000000 ] || fail "signals blocked: $(field SigBlk)"
# but for 32 and 33, glibc's own (its signal() refuses them): ignored when the test's caller
# had them so, and set by glibc itself in a program that uses them
[ "$(printf '%016x' $((0x$(field SigIgn) & ~0x180000000)))" = 0000000000000000 ] \
    || fail "signals ignored: $(field SigIgn)"
# (dash keeps the script it runs open, as 10; the glob's own is closed once listed)
fds=$(grep '^fd ' <<<"$out" | grep -Ev "(probe.sh|closed)$" | cut -d' ' -f2 | sort -n | tr '\n' ' ')
[ "$fds" = "0 1 2 " ] || fail "the task's descriptors: $(grep '^fd ' <<<"$out")"
[ "$(field umask)" = 0027 ] || fail "the task's umask: $(field umask), not its starter's 0027"
[ "$(field nofile)" = $soft ] || fail "the task's soft descriptor limit: $(field nofile), not $soft"
grep "^signalled" <<<"$out" && fail "the task could signal root's processes"
hooked() { [ -s "$tmp/hookout/$id" ]; }
wait_until 10 hooked || fail "no on_finish output for task $id"
[ "$(cat "$tmp/hookout/$id" 2>/dev/null)" = "$(wc -w <<<"$want_groups")" ] \
    || fail "the on_finish hook has $(cat "$tmp/hookout/$id" 2>/dev/null) groups, nobody" \
        "$(wc -w <<<"$want_groups")"

stop_daemon
echo "$fails failure(s)"
[ $fails -eq 0 ]
