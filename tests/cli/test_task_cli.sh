#!/bin/bash
# test_task_cli.sh — `carma task check|show`: exit statuses, messages and JSON keys.
set -u
carma=$1
src=$2
rad=$src/tests/data/rad
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

out=$("$carma" task check "$rad/resnet18_cifar100_20e_1.rad" "$src/examples/resnet18.yaml" 2>&1)
[ $? -eq 0 ] || fail "check of good files exited non-zero: $out"
grep -q "resnet18.yaml: ok" <<<"$out" || fail "no ok line: $out"

out=$("$carma" task check "$rad/resnet18_cifar100_20e_1.rad" "$rad/gpt2_xl.rad" 2>&1)
[ $? -eq 1 ] || fail "check with a bad file must exit 1"
grep -q "gpt2_xl.rad:9: expected the measured peak memory in MiB (line 9), file has only 8 lines" \
    <<<"$out" || fail "gpt2_xl message: $out"
grep -q "resnet18_cifar100_20e_1.rad: ok" <<<"$out" || fail "good file not reported ok"

"$carma" task check "$src/tests/data/yaml/unknown_key.yaml" 2>&1 |
    grep -q "unknown_key.yaml:3: unknown key 'memroy'" || fail "unknown key message"

# memory 0 is impossible (the daemon refuses it): `task check` says so, naming the line
printf 'command: "true"\nmemory: 0\n' >"$tmp/m0.yaml"
out=$("$carma" task check "$tmp/m0.yaml" 2>&1)
[ $? -eq 1 ] && grep -q "m0.yaml:2: memory: must be more than 0 MiB" <<<"$out" ||
    fail "memory 0 should not check ok: $out"

# The bounds a submission keeps (the daemon's, which `carma submit` checks first): a name of
# at most 255 bytes, a command of at most 126 KiB; `task check` says what submit would
printf 'name: %s\ncommand: "true"\n' "$(printf 'n%.0s' $(seq 255))" >"$tmp/name255.yaml"
printf 'name: %s\ncommand: "true"\n' "$(printf 'n%.0s' $(seq 256))" >"$tmp/name256.yaml"
printf 'command: "echo %s"\n' "$(head -c 129020 /dev/zero | tr '\0' c)" >"$tmp/cmd.yaml"
out=$("$carma" task check "$tmp/name255.yaml" 2>&1) || fail "a name of 255 bytes: $out"
for f in name256:"task.name: 256 bytes, at most 255" cmd:"task.command: 129025 bytes, at most 129024"; do
    out=$("$carma" task check "$tmp/${f%%:*}.yaml" 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qF "${f%%:*}.yaml: ${f#*:}" <<<"$out" || fail "${f%%:*}: exit $rc, $out"
    sub=$(cd "$tmp" && "$carma" submit --socket /nonexistent/carma.sock "${f%%:*}.yaml" 2>&1)
    grep -qF "${f#*:}" <<<"$sub" || fail "${f%%:*}: submit should refuse it alike: $sub"
done

# The text shows control characters escaped (a name must not drive the terminal); JSON is exact.
printf 'name: "evil\\e[2J\\nline2"\ncommand: "echo \\e]0;t\\a"\n' >"$tmp/esc.yaml"
out=$("$carma" task show "$tmp/esc.yaml")
grep -q $'\e' <<<"$out" && fail "task show printed a raw ESC: $(cat -v <<<"$out")"
grep -qxF 'name:        evil\x1b[2J\nline2' <<<"$out" && grep -qxF 'command:     echo \x1b]0;t\x07' <<<"$out" ||
    fail "task show should escape: $(cat -v <<<"$out")"
[ "$("$carma" task show --json "$tmp/esc.yaml" | jq -r .name)" = $'evil\e[2J\nline2' ] ||
    fail "task show --json should keep the name exact"

# An error quoting the file's text shows its controls escaped too (a quoted "\e" is an ESC).
printf 'command: "true"\nmemory: "\\e[2J"\n' >"$tmp/escerr.yaml"
out=$("$carma" task check "$tmp/escerr.yaml" 2>&1)
[ $? -eq 1 ] && ! grep -q $'\e' <<<"$out" &&
    grep -qF "escerr.yaml:2: memory: expected a memory size (MiB, or e.g. 512M, 20G), got '\x1b[2J'" \
    <<<"$out" || fail "an error should escape the file's text: $(cat -v <<<"$out")"
# A NUL ("\0" in double quotes) would cut the text short where carma reads it: an error.
printf 'command: "python train.py\\0 --epochs 5"\n' >"$tmp/nul.yaml"
printf 'command: "true"\nenv: {"A\\0B": x}\n' >"$tmp/nulkey.yaml"
out=$("$carma" task check "$tmp/nul.yaml" "$tmp/nulkey.yaml" 2>&1)
[ $? -eq 1 ] && grep -qF 'nul.yaml:1: command: contains a NUL character (\0)' <<<"$out" &&
    grep -qF 'nulkey.yaml:2: env: a key contains a NUL character (\0)' <<<"$out" ||
    fail "a NUL in a value or key should be an error: $out"

# `task check` refuses what `carma submit` and `carma run` would (docs/slurm-allocation.md: the
# same check): a workdir that is missing or no directory, text that is not UTF-8.
printf 'command: "true"\nworkdir: nodir\n' >"$tmp/nodir.yaml"
printf 'command: "true"\nworkdir: nodir.yaml\n' >"$tmp/filedir.yaml"
sed '3s/.*/python tr\xe9in.py/' "$rad/resnet18_cifar100_20e_1.rad" >"$tmp/latin1.rad"
for f in nodir:"working directory '$tmp/nodir' does not exist" \
         filedir:"working directory '$tmp/nodir.yaml' is not a directory" \
         latin1:"the command is not valid UTF-8"; do
    file=$(ls "$tmp/${f%%:*}".*)
    out=$("$carma" task check "$file" 2>&1); rc=$?
    [ $rc -eq 1 ] && grep -qF "${f#*:}" <<<"$out" || fail "task check ${f%%:*}: exit $rc, $out"
    sub=$("$carma" submit --socket /nonexistent/carma.sock "$file" 2>&1)
    grep -qF "${f#*:}" <<<"$sub" || fail "${f%%:*}: submit should refuse it alike: $sub"
done

json=$("$carma" task show --json "$rad/gpt2_large_2.rad")
[ $? -eq 0 ] || fail "show --json failed"
for key in '"id": null' '"name": "gpt2_large_2.rad"' '"gpus": 2' '"oracle": 28356' \
    '"horus": 40000' '"workdir": null' '"env": \[\]' '"summary": "gpt2_large.model"' \
    '"batch_size": 8' '"max_retries": null' '"command": "python workloads/gpt2_large_on_wiki.py"'; do
    grep -q "$key" <<<"$json" || fail "JSON lacks $key: $json"
done

"$carma" task show "$src/examples/resnet18.yaml" | grep -q "^gpus: *1$" || fail "text show"

"$carma" task show --bogus x.rad >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown option must exit 2"
"$carma" task frobnicate >/dev/null 2>&1
[ $? -eq 2 ] || fail "unknown subcommand must exit 2"
"$carma" task check >/dev/null 2>&1
[ $? -eq 2 ] || fail "check without files must exit 2"
"$carma" task show a.rad b.rad >/dev/null 2>&1
[ $? -eq 2 ] || fail "show with two files must exit 2"
"$carma" task show "$src/tasks.txt" 2>&1 | grep -q "unknown task file type" ||
    fail "unknown extension message"
mkdir "$tmp/dir.yaml"
out=$("$carma" task check "$tmp/dir.yaml" 2>&1); rc=$?
[ $rc -eq 1 ] && grep -q "dir.yaml: Is a directory" <<<"$out" || fail "a directory: exit $rc, $out"
# A warning quotes what the file named as an error would: escaped, never obeyed by the terminal
printf 'command: "true"\nsummary: "x\\e[31mred.model"\nbatch_size: 4\n' >"$tmp/warn.yaml"
for cmd in "task check" submit; do
    CARMA_SOCKET=$tmp/none.sock "$carma" $cmd "$tmp/warn.yaml" >/dev/null 2>"$tmp/err"
    grep -qF 'warning: ' "$tmp/err" && grep -qF 'no estimates' "$tmp/err" \
        && grep -qF "model summary 'x\x1b[31mred.model' not found" "$tmp/err" \
        && ! grep -q $'\e' "$tmp/err" || fail "$cmd: a warning not escaped: $(cat -v "$tmp/err")"
done
# A file another user named (a glob over a shared directory): its name reaches the terminal
# escaped in the ok line as in an error
evil=$tmp/$'ev\e]0;T\ail.yaml'
printf 'command: "true"\n' >"$evil"
out=$("$carma" task check "$evil" 2>&1)
[ $? -eq 0 ] && grep -qF 'ev\x1b]0;T\x07il.yaml: ok' <<<"$out" && ! grep -q $'\e' <<<"$out" \
    || fail "task check: a file name not escaped: $(cat -v <<<"$out")"
"$carma" task --help | grep -q "carma task check FILE" || fail "--help"
"$carma" help task | grep -q "carma task show" || fail "help task"

exit $((fails > 0))
