#!/usr/bin/env bash
# `carma simulate --out DIR` / `--plot DIR` and where DIR leads: a symlink of the user's (or
# root's) is followed, one of another user's is refused (at DIR, at a component above it, or
# inside a link's target; run as root, where such a link can be made), before anything is read
# or simulated and with nothing written; a dangling link is named so; a directory at an output
# file's name is found before the run; a write that fails (a file size limit) says why and
# leaves nothing. Also `--trace -` (not read from standard input) is a usage error.
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
trace=$SRC/data/traces/test.csv

# A symlink of the user's own: followed, the files land in its target.
mkdir "$tmp/real"; ln -s real "$tmp/mine"
"$CARMA" simulate --trace "$trace" --out "$tmp/mine/" >/dev/null 2>"$tmp/err" \
    || fail "--out through the user's own symlink exits 0: $(cat "$tmp/err")"
[ -s "$tmp/real/tasks.csv" ] && [ -s "$tmp/real/gpu_timeline.csv" ] \
    || fail "--out through the user's own symlink writes into its target"

# A dangling symlink: said so (it read "No such file or directory").
ln -s nowhere "$tmp/dangling"
err=$("$CARMA" simulate --trace "$trace" --out "$tmp/dangling" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--out $tmp/dangling: a symbolic link to a missing directory" \
    <<<"$err" || fail "--out on a dangling symlink: exit $rc, $err"

# A directory at tasks.csv: found before the trace is read (it was found after the whole run).
mkdir -p "$tmp/d/tasks.csv"
err=$("$CARMA" simulate --trace "$tmp/no-such.csv" --out "$tmp/d" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF -- "--out $tmp/d: $tmp/d/tasks.csv: Is a directory" <<<"$err" \
    || fail "--out with a directory at tasks.csv, checked first: exit $rc, $err"
[ "$(ls -A "$tmp/d")" = tasks.csv ] || fail "--out checked: DIR left as it was: $(ls -A "$tmp/d")"

# A write that fails (here the file size limit, as a full disk would): the reason is named
# (it read only "write failed"), and neither file nor DIR is left.
err=$(trap '' XFSZ; ulimit -f 4; "$CARMA" simulate --trace "$SRC/data/traces/philly_mix_90.csv" \
      --out "$tmp/big" 2>&1 >/dev/null); rc=$?
[ $rc -eq 1 ] && grep -qF "$tmp/big/tasks.csv: write failed: File too large" <<<"$err" \
    || fail "--out over the file size limit: exit $rc, $err"
[ -e "$tmp/big" ] && fail "--out over the file size limit left $(ls -A "$tmp/big")"
if command -v gnuplot >/dev/null; then
    err=$(trap '' XFSZ; ulimit -f 4; "$CARMA" simulate \
          --trace "$SRC/data/traces/philly_mix_90.csv" --plot "$tmp/bigp" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && grep -qF "$tmp/bigp/gpus-carma.dat: write failed: File too large" <<<"$err" \
        || fail "--plot over the file size limit: exit $rc, $err"
    [ -e "$tmp/bigp" ] && fail "--plot over the file size limit left $(ls -A "$tmp/bigp")"
fi

"$CARMA" simulate --trace - </dev/null >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -qF -- "--trace -: a trace is read from a file, not standard input" \
    "$tmp/err" || fail "--trace -: exit 2 saying so ($rc: $(cat "$tmp/err"))"

# Symlinks of another user's, as another user would plant them in /tmp: one at DIR pointing
# at a directory of ours had our files there replaced. Only root can make one here.
if [ "$(id -u)" = 0 ]; then
    other=65534
    mkdir "$tmp/victim"; echo precious >"$tmp/victim/tasks.csv"
    ln -s victim "$tmp/planted"; chown -h "$other" "$tmp/planted"
    ln -s planted "$tmp/mine2"                 # ours, to theirs
    mkdir "$tmp/victim/sub"; echo precious >"$tmp/victim/sub/tasks.csv"
    for dir in "$tmp/planted" "$tmp/planted/" "$tmp/planted/sub" "$tmp/mine2"; do
        out=$("$CARMA" simulate --trace "$tmp/no-such.csv" --out "$dir" 2>"$tmp/err"); rc=$?
        want="--out $dir: $tmp/planted is a symbolic link of another user's (uid $other)"
        [ $rc -eq 1 ] && grep -qF -- "$want" "$tmp/err" \
            || fail "--out $dir (another user's symlink) refused first: $rc, $(cat "$tmp/err")"
        [ -z "$out" ] || fail "--out $dir printed: $out"
    done
    [ "$(cat "$tmp/victim/tasks.csv")$(cat "$tmp/victim/sub/tasks.csv")" = preciousprecious ] \
        || fail "another user's symlink was followed"
    [ "$(ls -A "$tmp/victim")" = "sub
tasks.csv" ] || fail "another user's symlink: files made in its target: $(ls -A "$tmp/victim")"
    if command -v gnuplot >/dev/null; then
        out=$("$CARMA" simulate --trace "$trace" --plot "$tmp/planted" 2>"$tmp/err"); rc=$?
        [ $rc -eq 1 ] && [ -z "$out" ] && grep -qF "a symbolic link of another user's" "$tmp/err" \
            || fail "--plot on another user's symlink, before simulating: $rc, $(cat "$tmp/err")"
        [ -n "$(find "$tmp/victim" -name '*.png')" ] && fail "--plot followed another's symlink"
    fi
    # root's own symlinks are trusted: root made them (as /var/run -> /run)
    ln -s real "$tmp/roots"; chown -h 0 "$tmp/roots"
    "$CARMA" simulate --trace "$trace" --out "$tmp/roots" >/dev/null 2>&1 \
        || fail "--out through root's symlink exits 0"
else
    echo "SKIP: another user's symlink (needs root to make one)"
fi

exit $((fails > 0))
