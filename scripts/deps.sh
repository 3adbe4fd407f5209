#!/bin/sh
# Installs the Debian packages carma needs, when any is missing.
#   deps.sh        the build and `make run`: gnuplot-nox draws `carma simulate --plot`;
#                  python3-torch and python3-torchvision run `carma estimate --run`.
#   deps.sh test   also what only the tests use (`make test`): prometheus (the server and
#                  promtool) lints and scrapes the daemon's metrics; slurm-wlm, munge and
#                  libslurm-dev build carma's Slurm plugin and run the one-machine cluster of
#                  tests/slurm (slurm-wlm brings the lua job_submit plugin). The tests start
#                  their own servers, so the services these packages come with are neither
#                  started nor enabled when this script installs them.
#   deps.sh fuzz   also clang and its libFuzzer runtime (libclang-rt-dev, only recommended by
#                  clang) for `make fuzz`.
# As root it uses apt-get; otherwise it prints the exact command to run.
set -eu

PACKAGES="cmake make gcc pkg-config libyaml-dev libjansson-dev libsqlite3-dev libcmocka-dev jq sqlite3 procps gnuplot-nox python3-torch python3-torchvision"
TEST_PACKAGES="prometheus slurm-wlm munge libslurm-dev"
TEST_SERVICES="prometheus slurmctld slurmd munge"
case "${1:-}" in
"") ;;
test) PACKAGES="$PACKAGES $TEST_PACKAGES" ;;
fuzz) PACKAGES="$PACKAGES clang libclang-rt-dev" ;;
*) echo "usage: scripts/deps.sh [test|fuzz]" >&2; exit 2 ;;
esac

missing=""
for pkg in $PACKAGES; do
    if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $pkg"
    fi
done
[ -z "$missing" ] && exit 0

echo "deps: missing Debian packages:$missing" >&2
if [ "$(id -u)" -ne 0 ]; then
    echo "deps: run as root:  apt-get update && apt-get install -y$missing" >&2
    exit 1
fi

# Services of test-only packages installed now: note which were already there, and keep
# invoke-rc.d from starting any during the install (policy-rc.d exit 101: "not allowed"),
# unless the machine has a policy of its own.
had_services=""
for svc in $TEST_SERVICES; do
    [ -e "/lib/systemd/system/$svc.service" ] && had_services="$had_services $svc"
done
policy=/usr/sbin/policy-rc.d
own_policy=""
if [ "${1:-}" = test ] && [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# scripts/deps.sh: no service starts while it installs\nexit 101\n' >"$policy"
    chmod 755 "$policy"
    own_policy=1
    trap 'rm -f "$policy"' EXIT
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update -q >&2
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >&2

# Enabled at boot by their packages: not by us, for services nobody here asked for.
if [ -n "$own_policy" ] && command -v systemctl >/dev/null 2>&1; then
    for svc in $TEST_SERVICES; do
        case " $had_services " in *" $svc "*) continue ;; esac
        [ -e "/lib/systemd/system/$svc.service" ] || continue
        if systemctl disable "$svc" >/dev/null 2>&1; then
            echo "deps: $svc installed for the tests; its service is not enabled" >&2
        else
            echo "deps: $svc installed for the tests; could not disable its service" >&2
        fi
    done
fi
