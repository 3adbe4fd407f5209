#!/bin/bash
# test_xmem_submit.sh — `carma submit` without --mem estimates a Python training command with
# xmem on the client side (as the user, cached by script, arguments and environment, and
# checked against the files the script read), and
# `carma show` names the figure's source; the traced script has none of carma's
# descriptors. Needs /usr/bin/python3 with torch, else only notes it.
# Usage: test_xmem_submit.sh /path/to/carma /path/to/source_dir
set -u
CARMA=$1
SRC=$2
export CARMA_DATA_DIR="$SRC/data"
if ! /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    echo "note: /usr/bin/python3 has no torch (scripts/deps.sh installs it): not tested"
    exit 0
fi
source "$SRC/tests/cli/daemon_lib.sh"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
export XDG_CACHE_HOME=$tmp/cache
[ "$(id -u)" -eq 0 ] && export SUDO_UID=65534 SUDO_GID=65534 # trace as nobody, not root
start_daemon
S="$SRC/tests/data/xmem/tiny_mlp.py"

id1=$("$CARMA" submit -- python3 "$S" 2>"$tmp/err1") || fail "submit: $(cat "$tmp/err1")"
grep -q "xmem estimate [0-9]* MiB$" "$tmp/err1" || fail "no xmem estimate: $(cat "$tmp/err1")"
# said before the script runs (it runs at submit time, --hold or not)
head -1 "$tmp/err1" | grep -q "no --mem: estimating the peak with xmem (the script runs now" \
    || fail "no notice before the trace: $(cat "$tmp/err1")"
t=$("$CARMA" show --json "$id1")
[ "$(jq -r .mem_source <<<"$t")" = xmem ] || fail "show: source is not xmem: $t"
"$CARMA" show "$id1" | grep -q "xmem" ||
    fail "show (text) does not name xmem: $("$CARMA" show "$id1")"

# the same command again: from the cache, the same figure
"$CARMA" submit -- python3 "$S" >/dev/null 2>"$tmp/err2" || fail "submit 2"
grep -q "(cached)" "$tmp/err2" || fail "not cached: $(cat "$tmp/err2")"
[ "$(sed 's/ (cached)//' "$tmp/err2")" = "$(cat "$tmp/err1")" ] || fail "cached figure differs"
# another argument is another job
"$CARMA" submit -- python3 "$S" --other >/dev/null 2>"$tmp/err3"
grep -q "(cached)" "$tmp/err3" && fail "cached across arguments"

# --mem wins, and no trace is run
"$CARMA" submit --mem 3G -- python3 "$S" >/dev/null 2>"$tmp/err4" || fail "submit --mem"
grep -q xmem "$tmp/err4" && fail "traced despite --mem: $(cat "$tmp/err4")"
# a script it cannot trace: a warning, and the task is still queued
"$CARMA" submit -- python3 "$SRC/tests/data/xmem/unsupported_amp.py" >/dev/null 2>"$tmp/err5" ||
    fail "submit of an untraceable script failed"
grep -q "warning: no xmem estimate (cannot trace: mixed precision" "$tmp/err5" ||
    fail "no clear warning: $(cat "$tmp/err5")"

# what the script read beside it (its module, its config) is part of the cached figure: a
# change there is a new trace, not the old figure
mkdir "$tmp/proj"
printf 'import torch.nn as nn\nWIDTH = 64\n' >"$tmp/proj/model.py"
echo 8 >"$tmp/proj/batch.txt"
cat >"$tmp/proj/train.py" <<'EOF'
import os, torch, torch.nn as nn, model
b = int(open(os.path.join(os.path.dirname(__file__), "batch.txt")).read())
m = nn.Sequential(nn.Linear(16, model.WIDTH), nn.Linear(model.WIDTH, 4)).cuda()
opt = torch.optim.Adam(m.parameters())
for _ in range(3):
    opt.zero_grad(); m(torch.randn(b, 16).cuda()).sum().backward(); opt.step()
EOF
chmod -R a+rX "$tmp/proj"
sub() { "$CARMA" submit -- python3 "$tmp/proj/train.py" 2>&1 >/dev/null | tail -1; }
sub >/dev/null
[[ "$(sub)" == *"(cached)" ]] || fail "project: not cached: $(sub)"
printf 'import torch.nn as nn\nWIDTH = 65536\n' >"$tmp/proj/model.py"
[[ "$(sub)" != *"(cached)" ]] || fail "a changed imported module: the cached figure"
[[ "$(sub)" == *"(cached)" ]] || fail "project: not cached after the module's change"
echo 4096 >"$tmp/proj/batch.txt"
[[ "$(sub)" != *"(cached)" ]] || fail "a changed file the script read: the cached figure"

# the cache files are the user's alone
for f in "$XDG_CACHE_HOME"/carma/xmem/*.json; do
    [ "$(stat -c %a "$f")" = 600 ] || fail "cache file $f is mode $(stat -c %a "$f"), not 600"
done
# as root (sudo keeping the user's HOME), a cache directory another user owns is not used:
# root wrote through the links planted there, overwriting any file
if [ "$(id -u)" -eq 0 ]; then
    u=$tmp/usercache
    mkdir -p "$u/carma/xmem"
    echo precious >"$tmp/victim"
    for f in "$XDG_CACHE_HOME"/carma/xmem/*.json; do
        ln -s "$tmp/victim" "$u/carma/xmem/$(basename "$f").tmp"
    done
    chown -R 65534:65534 "$u"
    XDG_CACHE_HOME=$u "$CARMA" submit -- python3 "$S" >/dev/null 2>"$tmp/err6" ||
        fail "submit with another user's cache: $(cat "$tmp/err6")"
    grep -q "xmem estimate [0-9]* MiB$" "$tmp/err6" || fail "not traced: $(cat "$tmp/err6")"
    [ "$(cat "$tmp/victim")" = precious ] || fail "root wrote through the user's cache link"
fi

# the traced script has its input, output, the trace's file (3) and the list of the files it
# read (4): no descriptor of carma's or its caller's (9 here)
mkdir "$tmp/fds"
chmod 777 "$tmp/fds" # the script (as nobody, under root) writes its list there
cat >"$tmp/fds/fds.py" <<EOF
import os, torch, torch.nn as nn
own = " ".join(f for f in sorted(os.listdir("/proc/self/fd"), key=int)
               if os.path.exists("/proc/self/fd/" + f))
open("$tmp/fds/out", "w").write(own)
m = nn.Linear(16, 4).cuda()
opt = torch.optim.SGD(m.parameters(), lr=0.1)
for _ in range(3):
    opt.zero_grad(); m(torch.randn(8, 16).cuda()).sum().backward(); opt.step()
EOF
chmod 644 "$tmp/fds/fds.py"
"$CARMA" submit --hold -- python3 "$tmp/fds/fds.py" >/dev/null 2>"$tmp/err7" 9<"$tmp/err4" ||
    fail "submit fds.py: $(cat "$tmp/err7")"
[ "$(cat "$tmp/fds/out" 2>/dev/null)" = "0 1 2 3 4" ] ||
    fail "the traced script's descriptors are not 0 1 2 3 4: $(cat "$tmp/fds/out" 2>/dev/null)"

stop_daemon
[ "$fails" -eq 0 ] && echo "all xmem submit tests passed"
[ "$fails" -eq 0 ]
