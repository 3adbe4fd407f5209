#!/usr/bin/env bash
# `carma config`: defaults are CARMA's, the shipped data/carma.conf is exactly its output, --set
# and a config file override them, --list says where each option applies, and bad keys or
# values are clear errors: exit status 2 for a --set (a usage error), 1 for a file (naming its
# line).
set -u
CARMA=$1 SRC=$2
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$CARMA" config) || fail "config exits 0"
for kv in "policy = carma" "estimator = none" "smact_threshold = 0.8" "smocc_threshold = 0.45" \
          "drama_threshold = 0.4" "reserve_mib = 512" "margin_mib = 2048" "or_min_free_mib = 5120" \
          "window = 30" "aggregation = risk" "grace_s = 30" "retry_cap = 3"; do
    grep -qx "$kv" <<<"$out" || fail "default '$kv' missing"
done
diff -q <("$CARMA" config --config "$SRC/data/carma.conf") <("$CARMA" config) >/dev/null \
    || fail "data/carma.conf does not equal the built-in defaults"
diff -u "$SRC/data/carma.conf" <("$CARMA" config) \
    || fail "data/carma.conf is not \`carma config\` (regenerate it: carma config >data/carma.conf)"
# The policy help and the unknown-policy message both list the policy table.
help_names=$(sed -n 's/^# placement policy: //p' <<<"$out" | tr -d ' ' | tr ',' '\n' | sort)
msg_names=$("$CARMA" config --set policy=nope 2>&1 | head -1 | sed 's/.*(expected \(.*\))$/\1/; s/ or /, /' \
            | tr -d ' ' | tr ',' '\n' | sort)
[ -n "$help_names" ] && [ "$help_names" = "$msg_names" ] && grep -qx "horus" <<<"$help_names" \
    || fail "policy help lists the policy table: '$help_names' vs '$msg_names'"

"$CARMA" config --list >"$tmp/list.conf" || fail "config --list exits 0"
diff -q <("$CARMA" config --config "$tmp/list.conf") <("$CARMA" config) >/dev/null \
    || fail "config --list is a config file of the same values"
for line in "#   applies to: sched (carma daemon and carma simulate); takes a fraction between 0 and 1; default 0.8" \
            "#   applies to: daemon (carma daemon); takes 0.01..3600 seconds; default 1" \
            "#   applies to: sim (carma simulate); takes on or off; default on"; do
    grep -qxF "$line" "$tmp/list.conf" || fail "--list lacks '$line'"
done
# A bound that loading keeps across two keys is said in their help: sim_power_busy_frac and
# sim_power_util_frac each "take a number >= 0", yet --set of 2 for either was refused.
for key in sim_power_busy_frac sim_power_util_frac; do
    grep -B2 "^$key = " "$tmp/list.conf" | head -1 | grep -q "at most 2" \
        || fail "--list: $key's help does not say the sum's bound"
done
"$CARMA" config --set sim_power_busy_frac=2 >/dev/null 2>&1 \
    && fail "sim_power_busy_frac=2 with the default util_frac accepted"
"$CARMA" config --set sim_power_busy_frac=1.4 --set sim_power_util_frac=0.6 >/dev/null \
    || fail "a power sum of exactly 2 refused"
[ "$(grep -c '^#   applies to: ' "$tmp/list.conf")" -eq "$(grep -c '^$' <("$CARMA" config))" ] \
    || fail "--list: one 'applies to' line per option (each option's block ends with a blank line)"

out=$("$CARMA" config --set policy=oracle-MAGM --set margin_mib=4G) || fail "--set accepted"
grep -qx "policy = oracle-magm" <<<"$out" || fail "--set policy"
grep -qx "margin_mib = 4096" <<<"$out" || fail "--set size with unit"

printf 'policy = est-lug\nestimator = gpumemnet # trailing comment\n\nwindow=10\n' >"$tmp/ok.conf"
out=$("$CARMA" config --config "$tmp/ok.conf") || fail "good file accepted"
grep -qx "policy = est-lug" <<<"$out" || fail "file policy"
grep -qx "window = 10" <<<"$out" || fail "file window"
out=$(CARMA_CONFIG="$tmp/ok.conf" "$CARMA" config --set window=5) || fail "env config"
grep -qx "window = 5" <<<"$out" || fail "--set wins over the file"
grep -qx "estimator = gpumemnet" <<<"$out" || fail "\$CARMA_CONFIG read"

# What `carma config` prints reads back as the same values: '#' and spaces at the ends (quoted),
# every digit of a number; a value is one line.
"$CARMA" config --set 'on_finish=/x/a#b' --set 'socket=" /s "' \
    --set sim_gpu_model=X:16G:30.123456:212.345678 >"$tmp/rt.conf" || fail "round-trip values"
grep -qx 'on_finish = "/x/a#b"' "$tmp/rt.conf" || fail "a value with '#' is written quoted"
grep -qx 'sim_gpu_model = X:16384:30.123456:212.345678' "$tmp/rt.conf" || fail "model digits kept"
"$CARMA" config --config "$tmp/rt.conf" | cmp -s - "$tmp/rt.conf" \
    || fail "config output round-trips"
out=$("$CARMA" config --set 'policy = exclusive') && grep -qx "policy = exclusive" <<<"$out" \
    || fail "--set trims around key and value"

# A --set the config refuses is a usage error (exit 2); a file it cannot take a failure (exit 1).
want=2
bad() { # bad DESCRIPTION EXPECTED_TEXT ARGS...
    local desc=$1 text=$2; shift 2
    local msg rc
    msg=$("$CARMA" config "$@" 2>&1 >/dev/null); rc=$?
    [ "$rc" -eq "$want" ] || fail "$desc: exit $rc, expected $want"
    case "$msg" in *"$text"*) ;; *) fail "$desc: message '$msg' lacks '$text'" ;; esac
}
bad "unknown policy" "unknown policy 'round-robin'" --set policy=round-robin
bad "unknown key" "unknown config key 'polcy'" --set polcy=exclusive
bad "MPS thread percentage over 100" "mps_active_thread_percentage: expected 0..100, got 101" \
    --set mps_active_thread_percentage=101
bad "mps not a switch" "mps: expected on or off" --set mps=maybe
bad "bad fraction" "smact_threshold: expected a fraction" --set smact_threshold=1.2
bad "bad window" "window: expected 1..1000000, got 0" --set window=0
# an int with no bound of its own above is said to stop where it does (it said ">= 1" and then
# refused 1000001); a row's own wider bound is taken as said (2000000 was refused as past
# 1000000 while --list said 0..1073741824); past int64 is past the bounds, not "no integer"
bad "window past an int's bound" "window: expected 1..1000000, got 1000001" --set window=1000001
"$CARMA" config --list | grep -A1 "^# monitoring samples per GPU" | grep -q "takes 1..1000000;" \
    || fail "--list does not say window's upper bound"
out=$("$CARMA" config --set state_min_free_mib=2000000) \
    && grep -qx "state_min_free_mib = 2000000" <<<"$out" || fail "state_min_free_mib=2000000: $out"
bad "a window past int64" "window: expected 1..1000000, got '99999999999999999999'" \
    --set window=99999999999999999999
bad "ewma_alpha 0" "ewma_alpha: expected a fraction in (0, 1], got 0" --set ewma_alpha=0
bad "sample interval" "sample_interval_s: expected 0.01..3600 seconds" --set sample_interval_s=0.001
bad "unknown estimator" "unknown estimator 'dnnmem' (expected none, horus, faketensor, gpumemnet, carma or xmem)" \
    --set estimator=dnnmem
bad "not a pair" "expected KEY=VALUE" --set policy
bad "newline in a value" "socket: control character \\x0a in the value" \
    --set $'socket=/a\npolicy = exclusive'
# A --set that fails a check across keys (which waits for every --set) is the command line's
# fault too: the defaults and a file that loaded pass it on their own.
bad "power fractions" "--set: sim_power_busy_frac, sim_power_util_frac: must sum to at most 2" \
    --set sim_power_busy_frac=1.9
"$CARMA" config --set sim_power_busy_frac=1.9 --set sim_power_util_frac=0.05 >/dev/null \
    || fail "a check across keys waits for every --set"
bad "relative on_finish" "--set: on_finish: 'rel' is not an absolute path" --set on_finish=rel
# Tasks run in their own directories: a relative MPS pipe directory would name another there.
bad "relative mps_pipe_dir" "--set: mps_pipe_dir: 'mps/pipe' is not an absolute path" \
    --set mps_pipe_dir=mps/pipe
bad "relative mps_log_dir" "--set: mps_log_dir: 'log' is not an absolute path" \
    --set mps_log_dir=log
bad "bad metrics_listen" "--set: metrics_listen" --set metrics_listen=localhost
# a GPU backend carma does not have would stop the daemon only once started
bad "unknown gpu_backend" "--set: gpu_backend: unknown GPU backend 'foo' (available: sim, nvml)" \
    --set gpu_backend=foo
# and so would sim GPUs the sim backend cannot read, whichever backend is chosen
bad "bad sim_gpus" "--set: sim_gpus: sim GPUs 'bad': expected COUNTxNAME-<N>GB" \
    --set sim_gpus=bad
bad "unknown sim_server model" "--set: sim_server '4xB300': unknown GPU model 'B300'" \
    --set sim_server=4xB300
bad "a hexadecimal number" "--set: grace_s: expected 0..86400 seconds, got '0x1p3'" \
    --set grace_s=0x1p3
want=1
# From a file, the same checks name its line, and the key rather than an option never given.
printf 'window = 3\nsim_server = 0xA100-40GB\n' >"$tmp/server.conf"
bad "sim_server in a file" "server.conf:2: sim_server '0xA100-40GB': GPU count must be 1..100000" \
    --config "$tmp/server.conf"
"$CARMA" config --config "$tmp/server.conf" 2>&1 | grep -q -- "--gpus" \
    && fail "a bad sim_server names --gpus, which was not given"
printf 'sim_power_busy_frac = 1.9\n' >"$tmp/power.conf"
bad "power fractions in a file" "power.conf:1: sim_power_busy_frac, sim_power_util_frac" \
    --config "$tmp/power.conf"
printf 'gpu_backend = foo\n' >"$tmp/backend.conf"
bad "unknown gpu_backend in a file" "backend.conf:1: gpu_backend: unknown GPU backend 'foo'" \
    --config "$tmp/backend.conf"
printf 'gpu_backend = nvml\nsim_gpus = 2xA100\n' >"$tmp/simgpus.conf"
bad "bad sim_gpus in a file" "simgpus.conf:2: sim_gpus: sim GPUs '2xA100': expected COUNTxNAME" \
    --config "$tmp/simgpus.conf"
printf '# hook\non_finish = rel\n' >"$tmp/hook.conf"
bad "relative on_finish in a file" "hook.conf:2: on_finish: 'rel' is not an absolute path" \
    --config "$tmp/hook.conf"
# An empty string value is the key's built-in default (sim_server's is 4xA100-40GB).
printf 'sim_server =\n' >"$tmp/empty.conf"
out=$("$CARMA" config --config "$tmp/empty.conf") && grep -qx "sim_server = 4xA100-40GB" <<<"$out" \
    || fail "an empty sim_server is the default: $out"
out=$("$CARMA" config --set sim_gpus=) && grep -qx "sim_gpus = 2xA100-40GB" <<<"$out" \
    || fail "an empty sim_gpus is the default: $out"
bad "missing file" "nope.conf" --config "$tmp/nope.conf"
bad "a directory" "config $tmp: Is a directory" --config "$tmp"
# Nor anything else that is not a regular file: a FIFO's open would wait for a writer, a device
# such as /dev/zero would be read for ever.
mkfifo "$tmp/fifo"
for f in "$tmp/fifo" /dev/null; do
    msg=$(timeout 20 "$CARMA" config --config "$f" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && grep -qF "config $f: not a regular file" <<<"$msg" \
        || fail "--config $f: exit $rc: $msg"
done
printf 'policy = oracle-ff\nthis line is wrong\n' >"$tmp/bad.conf"
bad "bad line" "bad.conf:2: expected \`key = value\`" --config "$tmp/bad.conf"
printf 'estimator = magic\n' >"$tmp/bad2.conf"
bad "bad value in file" "bad2.conf:1: estimator: unknown estimator 'magic'" --config "$tmp/bad2.conf"
# A config that cannot be written whole (a full disk) is an error: it exited 0, cut short.
if [ -w /dev/full ]; then
    for args in "" "--list"; do
        err=$("$CARMA" config $args 2>&1 >/dev/full); rc=$?
        [ $rc -eq 1 ] && grep -q "^carma config: cannot write the output: No space left" <<<"$err" \
            || fail "config $args >/dev/full: exit $rc: $err"
    done
fi
# A key with an escape sequence, unknown, is shown escaped (the message quotes it).
err=$("$CARMA" config --set $'\e[2Jpolicy=carma' 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "--set with an escape: exit $rc"
grep -q $'\e' <<<"$err" && fail "raw ESC in the --set error: $(cat -v <<<"$err")"
grep -qF '\x1b[2J' <<<"$err" || fail "--set error shows the escape: $(cat -v <<<"$err")"

[ "$fails" -eq 0 ] && echo "config cli: all checks passed"
exit "$fails"
