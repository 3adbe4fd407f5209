#!/usr/bin/env bash
# `carma simulate --validate`: each row counts the jobs completed and failed, simulated and real
# (a run that lost jobs has its figures over fewer of them), in the text and in the JSON (null
# where the real count is unknown, never 0); --help lists the JSON's keys; a figure the
# simulation could not give (no job completed) is "-" in the text, not "nan".
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
command -v jq >/dev/null || exit 77
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$CARMA" simulate --validate --json) || fail "--validate --json exits 0"
jq -e 'all(.[]; (.sim_completed | type) == "number" and (.sim_failed | type) == "number")
       and ([.[] | select(.trace != "venus")] | all(.real_completed == 60 and .real_failed == 0))
       and ([.[] | select(.trace == "venus")] | all(.real_completed == null
                                                    and .real_failed == null))
       and (map(keys) | unique | length) == 1' <<<"$out" >/dev/null \
    || fail "--validate --json: completed and failed counts: $(jq -c '.[0], .[12]' <<<"$out")"
# --help names every key of a row (sim_X and real_X as "sim_ and real_ X")
help=$("$CARMA" simulate --help | tr -s ' \n' ' ')
for k in $(jq -r '.[0] | keys[]' <<<"$out"); do
    grep -q "[ ,]${k#*_}[,;) ]" <<<"$help" || fail "--help does not list the --validate key $k"
done

out=$("$CARMA" simulate --validate) || fail "--validate exits 0"
grep -q "OOM s/r *done/failed s r *energy MJ s/r$" <<<"$out" || fail "header: $out"
grep -q "^philly *exclusive .* 0/0 *60/0 60/0 *[0-9.]*/[0-9.]*$" <<<"$out" \
    || fail "philly exclusive row: $(grep '^philly *exclusive' <<<"$out")"
grep -q "^venus *lucid .* 60/0 - *[0-9.]*/-$" <<<"$out" \
    || fail "venus row (no real counts): $(grep '^venus *lucid' <<<"$out")"

# GPUs of 1 MiB: every job fails; the text says "-" for what is unknown, the counts say why.
tiny=(--set sim_gpu_model=TINY:1:10:70 --set sim_server=3xTINY)
out=$("$CARMA" simulate --validate "${tiny[@]}") || fail "--validate on 1-MiB GPUs exits 0"
grep -qi nan <<<"$out" && fail "--validate prints nan: $(grep -i nan <<<"$out" | head -3)"
grep -q "^philly *exclusive *- *42634s *-! *- *18823s *-! .* 0/60 60/0 *-/26.4$" <<<"$out" \
    || fail "1-MiB GPUs, philly exclusive: $(grep '^philly *exclusive' <<<"$out")"
grep -q "^saturn *lucid *- *0.852 *-! .* 0/60 60/0 *-/26.3$" <<<"$out" \
    || fail "1-MiB GPUs, saturn lucid: $(grep '^saturn *lucid' <<<"$out")"
"$CARMA" simulate --validate --json "${tiny[@]}" |
    jq -e 'all(.[]; .sim_completed == 0 and .sim_failed == 60 and .sim_makespan_s == null)' \
    >/dev/null || fail "1-MiB GPUs: JSON counts"

# A real run missing from run_summaries.csv: its counts are unknown, not 0.
mkdir "$tmp/data" && cp -r "$SRC/data/." "$tmp/data/"
grep -v "^saturn,lucid_baseline," "$SRC/data/aegis/run_summaries.csv" \
    >"$tmp/data/aegis/run_summaries.csv"
out=$(CARMA_DATA_DIR="$tmp/data" "$CARMA" simulate --validate --json) || fail "exits 0"
jq -e '.[] | select(.trace == "saturn" and .policy == "lucid")
       | .real_completed == null and .real_failed == null and .real_oom != null' <<<"$out" \
    >/dev/null || fail "a run without its summary row: counts null"
CARMA_DATA_DIR="$tmp/data" "$CARMA" simulate --validate | grep -q "^saturn *lucid .* 60/0 - " \
    || fail "a run without its summary row: '-' in the text"

exit $((fails > 0))
