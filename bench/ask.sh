#!/bin/bash
# An <ask> pause and its answer.  Times, median of REPEAT (default 21):
#   pause    `raymond wf --on-ask pause`: START.sh asks, the run is saved,
#            the JSON printed, exit status 2
#   answer   `raymond --resume ID --input yes`: the answer applied and
#            saved, DONE.sh run, the run completed
# against a plain run of one script step (START.sh printing a <result>),
# which starts the same binary and runs one script too, and against
# `raymond --version`, the process start alone.  What the ask costs is
# each one's time beyond the plain run.
#
#   bench/ask.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
ray="$build/raymond"
repeat=${REPEAT:-21}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir ask plain
echo 'echo "<ask next=\"DONE.sh\" timeout=\"48h\">Approve?</ask>"' >ask/START.sh
echo 'echo "<result>$RAYMOND_INPUT</result>"' >ask/DONE.sh
echo 'echo "<result>done</result>"' >plain/START.sh

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

pause=() answer=() plain=() version=()
for i in $(seq 1 "$repeat"); do
	t0=$(now); "$ray" ask --on-ask pause --workflow-id "a$i" --quiet >/dev/null 2>&1 || [ $? = 2 ]; t1=$(now)
	"$ray" --resume "a$i" --input yes --quiet >/dev/null 2>&1; t2=$(now)
	"$ray" plain --quiet >/dev/null 2>&1; t3=$(now)
	"$ray" --version >/dev/null; t4=$(now)
	pause+=($((t1 - t0))) answer+=($((t2 - t1))) plain+=($((t3 - t2))) version+=($((t4 - t3)))
done
# Each run left its state: every one was a first run of its id, as a user's is.
p=$(printf '%s\n' "${pause[@]}" | median)
a=$(printf '%s\n' "${answer[@]}" | median)
r=$(printf '%s\n' "${plain[@]}" | median)
v=$(printf '%s\n' "${version[@]}" | median)
awk -v p="$p" -v a="$a" -v r="$r" -v v="$v" 'BEGIN {
	printf "%-34s %10.2fms  plain run %.2fms, --version %.2fms\n", "ask: pause (exit 2)", p / 1e6, r / 1e6, v / 1e6
	printf "%-34s %10.2fms\n", "ask: answer with --resume --input", a / 1e6
	printf "%-34s %10.2fms %10.2fms   (target: 10)\n", "ask: beyond a plain run, each", (p - r) / 1e6, (a - r) / 1e6
}'
