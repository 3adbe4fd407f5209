#!/bin/sh
# gen-man.sh CARMA — writes carma(1) in roff to stdout, made from the help text the built
# binary CARMA prints (`carma help` and `carma COMMAND --help` for every command it lists), so
# that the man page cannot say other than --help. Run by the build (CMakeLists.txt).
set -eu
carma=$1
# roff: a backslash is \e, a hyphen \- (so options copy as typed), a line starting with . or '
# is not a request
esc() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e "s/^[.']/\\\\\\&&/"; }
version=$("$carma" --version | sed 's/^carma //')
commands=$("$carma" help | awk '/^Commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}')

printf '.TH CARMA 1 "" "carma %s" "User Commands"\n' "$version"
printf '.SH NAME\ncarma \\- collocation\\-aware GPU resource manager for deep\\-learning training\n'
printf '.SH SYNOPSIS\n.B carma\n[\\-\\-version] [\\-\\-help] COMMAND [ARGS]\n'
printf '.SH DESCRIPTION\n.nf\n'
"$carma" help | esc
printf '.fi\n.SH COMMANDS\n'
for c in $commands; do
    printf '.SS carma %s\n.nf\n' "$c"
    "$carma" "$c" --help | esc
    printf '.fi\n'
done
printf '.SH SEE ALSO\nThe README and docs/ of the source tree, installed in the documentation directory\n'
printf '(protocol.md: the daemon protocol).\n'
