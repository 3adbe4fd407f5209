#!/bin/bash
# carma_ablation.sh — the carma policy's parts measured alone in the calibrated simulator: for
# each AEGIS trace under data/aegis.conf (and CARMA's mix-90 under the defaults), makespan and
# mean JCT as fractions of exclusive, and OOM crashes, for: every part off (= est-magm), each
# part alone, every part on (the shipped carma), every part on but one, and on the AEGIS traces
# with estimator figures only, OOM learning against blind retries (with and without MPS caps).
#   usage: tools/carma_ablation.sh [BUILD_DIR]    (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
CARMA=${1:-build}/carma
PARTS=(carma_ledger carma_backfill carma_interference carma_oom_learning carma_longest_first
       carma_measured_first)

# flags PART_ON...: --set flags turning every part off but those named.
flags() {
    local on=" $* " f=() p
    for p in "${PARTS[@]}"; do
        [[ $on == *" $p "* ]] && f+=(--set "$p=on") || f+=(--set "$p=off")
    done
    echo "${f[@]}"
}

run() { # TRACE CONFIG_ARGS POLICY FLAGS... -> "makespan_s mean_jct_s oom"
    local trace=$1 cfg=$2 policy=$3
    shift 3
    # shellcheck disable=SC2086
    "$CARMA" simulate --trace "$trace" $cfg --policy "$policy" "$@" --json |
        jq -r '"\(.makespan_s) \(.mean_jct_s) \(.oom_crashes)"'
}

row() { # NAME TRACE CFG FLAGS...
    local name=$1 trace=$2 cfg=$3
    shift 3
    read -r m j o < <(run "$trace" "$cfg" carma "$@")
    printf '  %-34s %6.3f %6.3f %4d\n' "$name" "$(jq -n "$m / $EX_M")" "$(jq -n "$j / $EX_J")" "$o"
}

for t in philly saturn venus mix90; do
    if [ "$t" = mix90 ]; then trace=data/traces/philly_mix_90.csv cfg=""
    else trace=data/traces/aegis_${t}_60.csv cfg="--config data/aegis.conf"; fi
    read -r EX_M EX_J _ < <(run "$trace" "$cfg" exclusive)
    echo "== $t (makespan, mean JCT: fractions of exclusive; OOM crashes)"
    # shellcheck disable=SC2046
    row "all parts off (= est-magm)" "$trace" "$cfg" $(flags)
    for p in "${PARTS[@]}"; do
        # shellcheck disable=SC2046
        row "$p alone" "$trace" "$cfg" $(flags "$p")
    done
    # shellcheck disable=SC2046
    row "carma (all on)" "$trace" "$cfg" $(flags "${PARTS[@]}")
    for p in "${PARTS[@]}"; do
        others=()
        for q in "${PARTS[@]}"; do [ "$q" = "$p" ] || others+=("$q"); done
        # shellcheck disable=SC2046
        row "all but $p" "$trace" "$cfg" $(flags "${others[@]}")
    done
    [ "$t" = mix90 ] && continue
    # With estimator figures only (the AEGIS config's horus), out-of-memory crashes happen:
    # learning against blind retries, without and with MPS caps.
    for caps in off on; do
        # shellcheck disable=SC2046
        row "estimates, learning, caps $caps" "$trace" "$cfg" \
            $(flags "${PARTS[@]:0:5}") --set sim_mps_caps=$caps
        # shellcheck disable=SC2046
        row "estimates, blind retries, caps $caps" "$trace" "$cfg" \
            $(flags carma_ledger carma_backfill carma_interference carma_longest_first) \
            --set sim_mps_caps=$caps
    done
done
