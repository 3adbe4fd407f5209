#!/usr/bin/env bash
# The `carma` command table: help, --version, and exit status 2 for unknown commands/options.
set -u
CARMA=$1
fails=0
check() { # check DESCRIPTION EXPECTED_STATUS COMMAND...
    local desc=$1 want=$2; shift 2
    local out rc
    out=$("$@" 2>&1); rc=$?
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $desc: exit $rc, expected $want; output: $out"; fails=$((fails + 1))
    fi
    LAST_OUT=$out
}
expect_text() { # expect_text DESCRIPTION TEXT
    case "$LAST_OUT" in *"$2"*) ;; *) echo "FAIL: $1: no '$2' in: $LAST_OUT"; fails=$((fails + 1)) ;; esac
}

check "help" 0 "$CARMA" help
expect_text "help lists config" "config"
check "no arguments is a usage error" 2 "$CARMA"
expect_text "no-args usage" "usage: carma"
expect_text "no-args points at help" "carma help"
out=$("$CARMA" 2>/dev/null)
[ -z "$out" ] || { echo "FAIL: no arguments: the usage goes to stderr, stdout had: $out"; fails=$((fails + 1)); }
check "--help" 0 "$CARMA" --help
expect_text "--help lists the commands" "Commands:"
check "--version" 0 "$CARMA" --version
expect_text "--version" "carma "
check "unknown command" 2 "$CARMA" frobnicate
expect_text "unknown command names it" "'frobnicate' is not a carma command"
check "help of unknown command" 2 "$CARMA" help frobnicate
# what was typed is shown, not obeyed by the terminal
check "unknown command with an escape" 2 "$CARMA" $'fro\e[2Jb'
expect_text "unknown command escaped" "'fro\\x1b[2Jb' is not a carma command"
check "help of unknown command with an escape" 2 "$CARMA" help $'fro\e[2Jb'
expect_text "help's unknown command escaped" "'fro\\x1b[2Jb' is not a carma command"
check "unknown long option" 2 "$CARMA" config --bogus
expect_text "unknown option names it" "unknown option '--bogus'"
check "unknown short option" 2 "$CARMA" config -z
expect_text "unknown short option names it" "unknown option '-z'"
# in a group getopt is still on the word: the option was named as the word before it
check "unknown grouped short option" 2 "$CARMA" config -zq
expect_text "unknown grouped short option names it" "unknown option '-z'"
check "unknown grouped short option after a long one" 2 "$CARMA" queue --all -99
expect_text "a negative number's option names it" "unknown option '-9'"
check "missing option value" 2 "$CARMA" config --set
expect_text "missing value" "needs a value"
check "help of a command" 0 "$CARMA" help config
expect_text "command help" "usage: carma config"

# Every command in the table answers --help with its usage and status 0.
# (the list ends at the first empty line: what follows is prose)
for cmd in $("$CARMA" help | awk '/^Commands:/{on=1; next} on && !NF {exit} on {print $1}'); do
    check "$cmd --help" 0 "$CARMA" "$cmd" --help
    expect_text "$cmd --help shows usage" "usage: carma $cmd"
    # a terminal's width, give or take: a line run on past it is a wrapping slip
    wide=$(awk 'length > 95' <<<"$LAST_OUT")
    [ -z "$wide" ] || { echo "FAIL: $cmd --help has lines over 95 columns: $wide"; fails=$((fails + 1)); }
done

# An empty path (a variable left unset in a script) is a usage error naming its option, not
# taken as no option (the default socket, config or catalog) or as the current directory.
empty_path() { # empty_path OPTION COMMAND [ARGS...]: refused with COMMAND ARGS OPTION ""
    local opt=$1
    shift
    check "$* $opt ''" 2 timeout 20 "$CARMA" "$@" "$opt" ""
    expect_text "$* $opt '' names it" "$opt: empty path"
}
for cmd in queue submit gpus run; do
    empty_path --socket "$cmd"
    empty_path --config "$cmd"
done
for opt in --socket --state --config; do empty_path "$opt" daemon; done
empty_path --config config
empty_path --library gpus --gpu-backend sim
empty_path --output-dir run
empty_path --summary submit --batch 2
empty_path --summary estimate --batch 2
empty_path --out estimate --train-gpumemnet
for opt in --trace --fit-xmem; do empty_path "$opt" estimate; done
for opt in --trace --out --plot --catalog --config; do empty_path "$opt" simulate; done
for opt in --out --catalog --arrivals; do empty_path "$opt" trace synth --jobs 2; done

# Every other file carma reads for a user is refused too when it is a FIFO (its open would wait
# for a writer) or a device.
fifo=$(mktemp -u --suffix=.yaml) # a task file by its name
mkfifo "$fifo" && trap 'rm -f "$fifo"' EXIT
not_regular() { # not_regular ARGS...: carma ARGS, naming $fifo, fails at once saying so
    check "$* on a FIFO" 1 timeout 20 "$CARMA" "$@"
    expect_text "$* on a FIFO" "$fifo: not a regular file"
}
not_regular task check "$fifo"
not_regular simulate --trace "$fifo"
not_regular simulate --catalog "$fifo"
not_regular trace synth --jobs 2 --catalog "$fifo"
not_regular trace synth --jobs 2 --arrivals "$fifo"
not_regular estimate --summary "$fifo" --batch 2
not_regular estimate --trace "$fifo"

[ "$fails" -eq 0 ] && echo "cli contract: all checks passed"
exit "$fails"
