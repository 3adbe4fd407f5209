# expect_lib.sh — `expect STATUS PATTERN CMD...` for the CLI tests, sourced by them: runs CMD,
# fails (through the test's own `fail`) unless it exits STATUS with PATTERN (a grep regex; with
# expect_fixed, a fixed string) in its stdout and stderr. CTest runs every tests/cli/*.sh, this
# one too: run on its own it does nothing and exits 0.
[ "${BASH_SOURCE[0]}" = "$0" ] && exit 0

_expect() { # GREP_FLAG STATUS PATTERN CMD...
    local flag=$1 want=$2 pat=$3
    shift 3
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    [ "$rc" -eq "$want" ] || fail "$* -> exit $rc, want $want: $out"
    printf '%s' "$out" | grep -q $flag -- "$pat" || fail "$* -> output lacks '$pat': $out"
}
expect() { _expect "" "$@"; }
expect_fixed() { _expect -F "$@"; }
