#!/usr/bin/env bash
# The daemon reads its config and runs its on_finish program only when nobody but its own user
# or root could have written them (as sshd's StrictModes): a config writable by others, owned
# by another user or in a directory others can write to (not sticky) stops the start, naming
# the culprit, its owner and mode; an on_finish program writable by others likewise. A config
# reached through a symlink is judged where it lies, and read (an on_finish program run) there:
# a link in another user's directory cannot be swapped later; one in a sticky directory is
# accepted.
# The attacks by another owner need root (uid 65534); the rest run as any user.
set -u
CARMA=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
source "$(dirname "$0")/daemon_lib.sh"
root=0
[ "$(id -u)" -eq 0 ] && root=1
me=$(id -u)

# refused CONFIG PATTERN: a daemon with that config must exit 1, saying PATTERN, serving nothing.
refused() {
    local out rc
    out=$(timeout 5 "$CARMA" daemon --socket "$tmp/r.sock" --state "$tmp/r-state" \
          --gpu-backend sim --config "$1" 2>&1 >/dev/null)
    rc=$?
    [ $rc -eq 1 ] || { fail "config $1 accepted (rc $rc): $out"; return; }
    grep -qF -- "$2" <<<"$out" || fail "refusal of $1 should say '$2': $out"
    [ ! -e "$tmp/r.sock" ] && [ ! -e "$tmp/r-state" ] || fail "a refused start left files"
}
good() { printf 'sample_interval_s = 0.2\n' >"$1"; chmod 0644 "$1"; }

mkdir -m 0755 "$tmp/etc"
good "$tmp/etc/carma.conf"
chmod 0666 "$tmp/etc/carma.conf"
refused "$tmp/etc/carma.conf" "config $tmp/etc/carma.conf is owned by uid $me with mode 0666"
chmod 0620 "$tmp/etc/carma.conf"
refused "$tmp/etc/carma.conf" "with mode 0620; refusing it"

# A directory above it that others can write to (not sticky): they could swap the file.
mkdir -m 0777 "$tmp/open" && chmod 0777 "$tmp/open" && mkdir -m 0755 "$tmp/open/etc"
good "$tmp/open/etc/carma.conf"
refused "$tmp/open/etc/carma.conf" "is in directory $tmp/open, owned by uid $me with mode 0777"

# An on_finish program others can write to: it would run as every task's owner.
good "$tmp/etc/hook.conf"
printf '#!/bin/sh\nexit 0\n' >"$tmp/etc/hook" && chmod 0757 "$tmp/etc/hook"
printf 'on_finish = %s\n' "$tmp/etc/hook" >>"$tmp/etc/hook.conf"
refused "$tmp/etc/hook.conf" "on_finish program $tmp/etc/hook is owned by uid $me with mode 0757"

# Accepted: through a symlink to a trusted file, and in a sticky directory (as /tmp).
good "$tmp/etc/carma.conf"
ln -s "$tmp/etc/carma.conf" "$tmp/link.conf"
chmod 0755 "$tmp/etc/hook"
mkdir -m 1777 "$tmp/sticky" && chmod 1777 "$tmp/sticky"
cp "$tmp/etc/hook.conf" "$tmp/sticky/carma.conf" && chmod 0644 "$tmp/sticky/carma.conf"
for conf in "$tmp/link.conf" "$tmp/sticky/carma.conf"; do
    start_daemon --sim-gpus 1xA100-40GB --config "$conf"
    "$CARMA" queue >/dev/null 2>&1 || fail "a trusted config was refused: $conf: $(cat "$tmp/daemon.log")"
    stop_daemon
done

if [ $root -eq 1 ]; then
    # Owned by another user, even read-only: refused.
    good "$tmp/etc/theirs.conf" && chown 65534 "$tmp/etc/theirs.conf"
    refused "$tmp/etc/theirs.conf" "config $tmp/etc/theirs.conf is owned by uid 65534 with mode 0644"
    # A directory above owned by another user.
    mkdir -m 0755 "$tmp/theirs" && chown 65534 "$tmp/theirs"
    good "$tmp/theirs/carma.conf"
    refused "$tmp/theirs/carma.conf" "is in directory $tmp/theirs, owned by uid 65534 with mode 0755"
    # on_finish named through a symlink in another user's directory: the daemon checks where
    # the link points at start, but the program runs at every task's end, as its owner; the
    # directory's owner must not be able to swap the link for a program of their own then.
    printf '#!/bin/sh\necho ok >>%s/hook.ran\n' "$tmp" >"$tmp/etc/okhook"
    chmod 0755 "$tmp/etc/okhook"
    ln -s "$tmp/etc/okhook" "$tmp/theirs/hook"
    good "$tmp/etc/swap.conf"
    printf 'on_finish = %s\n' "$tmp/theirs/hook" >>"$tmp/etc/swap.conf"
    start_daemon --sim-gpus 1xA100-40GB --config "$tmp/etc/swap.conf"
    printf '#!/bin/sh\necho pwned >>%s/hook.ran\n' "$tmp" >"$tmp/theirs/evil"
    chown 65534 "$tmp/theirs/evil" && chmod 0755 "$tmp/theirs/evil"
    setpriv --reuid=65534 --regid=65534 --clear-groups \
        ln -sfn "$tmp/theirs/evil" "$tmp/theirs/hook" \
        || fail "the directory's owner could not replace the link"
    id=$("$CARMA" submit -- true) || fail "submit"
    wait_until 10 test -s "$tmp/hook.ran" \
        || fail "the on_finish hook did not run: $(cat "$tmp/daemon.log")"
    [ "$(cat "$tmp/hook.ran" 2>/dev/null)" = ok ] \
        || fail "another user swapped the on_finish program through its link: \
$(cat "$tmp/hook.ran")"
    stop_daemon
else
    echo "note: not root: configs owned by another user are not tried"
fi

[ $fails -eq 0 ] && echo PASS
exit $((fails > 0))
