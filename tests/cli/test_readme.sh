#!/usr/bin/env bash
# README.md's examples run as written: every code block marked `<!-- readme-test: NAME -->`
# is run line by line, each line one shell command that must succeed, against a daemon on
# the sim backend:
#   user    the lab user's quick start, with the installed carma (a DESTDIR `make install`)
#           and no socket set: a root daemon on the system socket answers it;
#   daemon  the daemon section's, with its own daemon;
#   simulate, validate, config: the simulator's and the configuration's;
# the last four from a copy of the source tree's layout (data/ and examples/ linked), so that
# what they write (results/, plots/, big.csv) lands in the temporary directory.
# Paths are moved into a temporary directory: /tmp/ -> $tmp/, /usr/local -> the DESTDIR
# prefix, build/ -> this build. `python3` is a stand-in (no PyTorch, no GPU here) that prints
# and sleeps; a line ending in `&` is waited on until the daemon answers.
set -u
CARMA=$(realpath "$1")
SRC=$(realpath "$2")
BUILD=$(dirname "$CARMA")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
if [ "$(id -u)" -ne 0 ]; then
    echo "SKIP: the user quick start needs a root daemon on the system socket: run as root"
    exit 0
fi
tmp=$(mktemp -d)
chmod 755 "$tmp"
cleanup() {
    [ -n "${DPID:-}" ] && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
    for f in "$tmp"/*/attempts/*/lock; do # supervisors of tasks still running
        [ -f "$f" ] && [ ! -f "${f%/lock}/result" ] && kill -KILL "$(cat "$f")" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
unset CARMA_SOCKET CARMA_CONFIG CARMA_DATA_DIR
export CARMA_SYSTEM_CONFIG= CARMA_SYSTEM_SOCKET=$tmp/system.sock

# block NAME: the lines of the README block marked NAME
block() {
    awk -v name="$1" '$0 == "<!-- readme-test: " name " -->" {want = 1; next}
        want && /^```/ {if (inside) exit; inside = 1; next} inside {print}' "$SRC/README.md"
}
mkdir -p "$tmp/bin"
cat >"$tmp/bin/python3" <<'PY'
#!/bin/sh
echo "python3 $*"
case "$*" in *resnet18*) sleep 30 ;; *) sleep 1 ;; esac
PY
chmod 755 "$tmp/bin/python3"

# run_block NAME DIR: runs the block's lines in one shell in DIR (its exports carry on)
run_block() {
    # DPID local: the caller's DPID (the system daemon of the user block) must survive
    local name=$1 script=$tmp/$1.sh n=0 line DPID=
    [ -n "$(block "$name")" ] || { fail "README.md has no block marked readme-test: $name"; return; }
    {
        echo 'set -u'
        echo 'wait_daemon() { for _ in $(seq 50); do carma queue >/dev/null 2>&1 && return; sleep 0.2; done; }'
        while IFS= read -r line; do
            n=$((n + 1))
            [ -z "${line// /}" ] && continue
            line=${line//\/tmp\//$tmp\/}
            line=${line//build\//$BUILD\/}
            line=${line//\/usr\/local/$P}
            if [[ $line =~ \&[[:space:]]*(#.*)?$ ]]; then
                printf '%s\nDPID=$!; echo "DPID=$DPID" >"%s/%s.pid"; wait_daemon\n' \
                    "${line%%&*}>>$tmp/$name.daemon.log 2>&1 &" "$tmp" "$name"
            else
                printf '{ %s\n} >>"%s/%s.out" 2>&1 || echo "FAIL: README block %s, line %d failed: "%q\n' \
                    "$line" "$tmp" "$name" "$name" "$n" "$line"
            fi
        done < <(block "$name")
    } >"$script"
    # into a file, not a pipe: the daemon it starts keeps its output open
    (cd "$2" && PATH=$tmp/bin:$PATH bash "$script") >"$tmp/$name.fails" 2>&1
    cat "$tmp/$name.fails" >>"$tmp/fails"
    cat "$tmp/$name.fails"
    [ -f "$tmp/$name.pid" ] && source "$tmp/$name.pid" && kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
    true
}

# ---- the lab user's quick start: the installed carma, the root daemon on the system socket
root=$tmp/root
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")
P=$root$prefix
DESTDIR=$root cmake --install "$BUILD" >/dev/null 2>&1 || { echo "FAIL: cmake --install"; exit 1; }
"$P/bin/carma" daemon --gpu-backend sim --state "$tmp/system-state" \
    --set sample_interval_s=0.2 --set grace_s=0.2 >/dev/null 2>"$tmp/daemon.log" &
DPID=$!
for _ in $(seq 50); do "$P/bin/carma" queue >/dev/null 2>&1 && break; sleep 0.2; done
mkdir "$tmp/work"
PATH=$P/bin:$PATH run_block user "$tmp/work"
kill "$DPID" 2>/dev/null && wait "$DPID" 2>/dev/null
DPID=
grep -q "python3 train.py --lr 0.1" "$tmp/user.out" || fail "carma logs 1 --follow did not print task 1's output"

# ---- the other blocks, from the source tree's layout, with the build's carma
mkdir "$tmp/tree"
ln -s "$SRC/data" "$SRC/examples" "$tmp/tree/"
for name in daemon simulate validate config; do
    PATH=$BUILD:$PATH run_block "$name" "$tmp/tree"
done
grep -c "^FAIL" "$tmp/fails" >/dev/null && fails=$((fails + $(grep -c "^FAIL" "$tmp/fails")))
[ $fails -eq 0 ] || { echo "--- output:"; cat "$tmp"/*.out; }
exit $((fails > 0))
