#!/usr/bin/env bash
# `make install` (cmake --install of this build) into a DESTDIR: every file lands where the
# README says; the installed binary reads its data from PREFIX/share/carma; an existing
# /etc/carma/carma.conf survives a reinstall; the unit starts the installed binary and passes
# `systemd-analyze verify`; the man page is every command's --help; completion completes.
set -u
CARMA=$(realpath "$1")
BUILD=$(dirname "$CARMA")
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$tmp/root
prefix=$(sed -n 's/^CMAKE_INSTALL_PREFIX:PATH=//p' "$BUILD/CMakeCache.txt")
sysconf=$(sed -n 's/^CARMA_SYSCONFDIR:PATH=//p' "$BUILD/CMakeCache.txt")
P=$root$prefix
out=$(DESTDIR=$root cmake --install "$BUILD" 2>&1) || { echo "FAIL: cmake --install: $out"; exit 1; }

for f in bin/carma share/carma/workloads.csv share/carma/carma.conf share/carma/python/carma_trace \
    share/carma/gpumemnet/weights share/carma/traces share/man/man1/carma.1 \
    share/bash-completion/completions/carma lib/systemd/system/carma.service \
    share/doc/carma/README.md share/doc/carma/protocol.md share/doc/carma/examples/resnet18.yaml \
    share/doc/carma/metrics.md share/doc/carma/grafana/carma-dashboard.json; do
    [ -e "$P/$f" ] || fail "make install did not install PREFIX/$f"
done
[ -x "$P/bin/carma" ] || fail "the installed carma is not executable"
[ -f "$root$sysconf/carma.conf" ] || fail "make install did not install $sysconf/carma.conf"
[ "$(stat -c %a "$root$sysconf/carma.conf")" = 644 ] || fail "carma.conf should be 0644"

# The installed binary's data is PREFIX/share/carma, wherever the build tree is.
icarma() { env -u CARMA_DATA_DIR -u CARMA_CONFIG CARMA_SYSTEM_CONFIG= "$P/bin/carma" "$@"; }
icarma simulate --json >/dev/null || fail "the installed carma cannot simulate with its own data"
icarma config --config "$root$sysconf/carma.conf" >/dev/null || fail "the installed carma.conf does not load"
mv "$P/share/carma/workloads.csv" "$tmp/"
out=$(icarma simulate 2>&1) && fail "simulate ran without PREFIX/share/carma/workloads.csv"
grep -qF "$P/share/carma/workloads.csv" <<<"$out" || fail "the installed carma should read $P/share/carma: $out"
mv "$tmp/workloads.csv" "$P/share/carma/"

# A reinstall keeps an admin's config.
echo "policy = lucid" >>"$root$sysconf/carma.conf"
DESTDIR=$root cmake --install "$BUILD" >/dev/null 2>&1 || fail "reinstall"
grep -q "^policy = lucid" "$root$sysconf/carma.conf" || fail "a reinstall overwrote $sysconf/carma.conf"

# The unit runs the installed binary with the system config.
unit=$P/lib/systemd/system/carma.service
grep -qx "ExecStart=$prefix/bin/carma daemon --config $sysconf/carma.conf" "$unit" \
    || fail "the unit's ExecStart should be $prefix/bin/carma: $(grep ExecStart "$unit")"
if command -v systemd-analyze >/dev/null; then
    # verify checks that ExecStart exists: a copy of the unit names the DESTDIR's binary
    mkdir "$tmp/unit"
    sed "s#^ExecStart=$prefix/#ExecStart=$P/#" "$unit" >"$tmp/unit/carma.service"
    out=$(cd "$tmp" && MANPATH=$P/share/man systemd-analyze verify "$tmp/unit/carma.service" 2>&1) \
        || fail "systemd-analyze verify carma.service: $out"
else
    echo "SKIP: systemd-analyze is not installed: the unit was not verified"
fi

# The man page holds every command's --help.
man=$P/share/man/man1/carma.1
for c in $("$CARMA" help | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}'); do
    grep -qx ".SS carma $c" "$man" || fail "the man page has no section for carma $c"
done
first=$("$CARMA" submit --help | head -1 | sed 's/-/\\-/g')
grep -qF "$first" "$man" || fail "the man page lacks submit --help's first line: $first"
if command -v groff >/dev/null; then
    out=$(groff -man -Tutf8 -ww -z "$man" 2>&1)
    [ -z "$out" ] || fail "groff warns about carma.1: $out"
fi

# Completion: commands, then a command's options.
comp() { bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _carma; echo "${COMPREPLY[*]}"' \
    _ "$P/share/bash-completion/completions/carma" "$@"; }
[ "$(comp "$P/bin/carma" sub)" = submit ] || fail "completion of 'carma sub': '$(comp "$P/bin/carma" sub)'"
[[ " $(comp "$P/bin/carma" queue --)" == *" --all "* ]] || fail "completion of 'carma queue --': '$(comp "$P/bin/carma" queue --)'"
exit $((fails > 0))
