#!/usr/bin/env bash
# carma.service (made by the build from contrib/carma.service.in): systemd-analyze rates its sandbox "OK" or better (exposure below 5.0),
# and the unit keeps what the daemon needs (its capabilities, the GPUs, its state and runtime
# directories, enough file descriptors, tasks that outlive a restart). Skipped where
# systemd-analyze or its --offline mode (systemd 250 and newer) is missing.
set -u
UNIT=$(dirname "$1")/carma.service
[ -f "$UNIT" ] || { echo "FAIL: the build made no $UNIT"; exit 1; }
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# what the daemon cannot run without, whatever the rating says
has() { grep -Eq "^$1\$" "$UNIT" || fail "carma.service lacks '$1'"; }
has 'ExecStart=/.*/bin/carma daemon --config /.*/carma.conf'
has 'KillMode=process'
has 'StateDirectory=carma'
has 'RuntimeDirectory=carma'
has 'DevicePolicy=closed'
has 'DeviceAllow=char-nvidia-frontend rw'
has 'DeviceAllow=char-nvidia-uvm rw'
has 'DeviceAllow=char-nvidiactl rw'
nofile=$(sed -n 's/^LimitNOFILE=//p' "$UNIT")
[ -n "$nofile" ] && [ "$nofile" -ge 65536 ] || fail "LimitNOFILE should be at least 65536, is '$nofile'"
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$UNIT")
for cap in CAP_SETUID CAP_SETGID CAP_KILL CAP_CHOWN CAP_DAC_READ_SEARCH; do
    [[ " $caps " == *" $cap "* ]] || fail "CapabilityBoundingSet lacks $cap (has '$caps')"
done

if ! command -v systemd-analyze >/dev/null; then
    echo "SKIP: systemd-analyze is not installed; the rating was not checked"
    exit $((fails > 0))
fi
out=$(systemd-analyze security --offline=true "$UNIT" 2>&1)
rc=$?
line=$(grep -o 'Overall exposure level for carma.service: [0-9.]* [A-Z]*' <<<"$out")
if [ -z "$line" ]; then
    if grep -qi 'offline' <<<"$out"; then
        echo "SKIP: this systemd-analyze has no --offline mode: $(head -1 <<<"$out")"
        exit $((fails > 0))
    fi
    fail "systemd-analyze security gave no rating (exit $rc): $out"
else
    read -r exposure rating <<<"${line##*: }"
    echo "carma.service: exposure $exposure $rating"
    case $rating in
    PERFECT | SAFE | OK) ;;
    *) fail "systemd-analyze rates carma.service $exposure $rating, not OK or better:
$(grep '✗' <<<"$out")" ;;
    esac
fi
exit $((fails > 0))
