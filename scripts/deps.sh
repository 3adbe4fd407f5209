#!/bin/sh
# Installs the Debian packages carma's build needs, when any is missing (gnuplot-nox draws
# `carma simulate --plot`; python3-torch and python3-torchvision run `carma estimate --run`
# and its tests; prometheus, the server and promtool, lints and scrapes the daemon's metrics
# in their tests: Debian's package also starts a prometheus service on :9090, which they do
# not use; `systemctl disable --now prometheus` stops it; slurm-wlm, munge and libslurm-dev
# build carma's Slurm plugin and run the one-machine cluster of tests/slurm, slurm-wlm
# bringing the lua job_submit plugin and its liblua5.1). `deps.sh fuzz` also wants clang and
# its libFuzzer runtime (libclang-rt-dev, only recommended by clang) for `make fuzz`.
# As root it uses apt-get; otherwise it prints the exact command to run.
set -eu

PACKAGES="cmake make gcc pkg-config libyaml-dev libjansson-dev libsqlite3-dev libcmocka-dev jq sqlite3 procps gnuplot-nox python3-torch python3-torchvision prometheus slurm-wlm munge libslurm-dev"
[ "${1:-}" = fuzz ] && PACKAGES="$PACKAGES clang libclang-rt-dev"

missing=""
for pkg in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: missing Debian packages:$missing" >&2
if [ "$(id -u)" -eq 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >&2
    # shellcheck disable=SC2086
    apt-get install -y -q --no-install-recommends $missing >&2
else
    echo "deps: run as root:  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi
