#!/bin/bash
# raymond test.  Times, median of REPEAT (default 5):
#   chain    `raymond test` of one case: a 50-state markdown chain, each
#            state's reply scripted, against `raymond run` of the same
#            chain as 50 script states (the engine's own work for the
#            same steps, with a process per step), and against
#            `raymond --version`, the process start alone; in wall time
#            and in processor time (raymond's and its children's)
#   chaos    `raymond test --chaos 20` of a 10-state case (5 markdown
#            and 5 script states), against the same case without chaos
#   examples `raymond test` of 100 or more cases of the example workflows
#            (each test file of workflows/ twice), --jobs 2, against
#            starting as many one-step runs of a script, two at a time:
#            the least a runner that starts a run per case can take
#
#   bench/test.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ray="$build/raymond"
repeat=${REPEAT:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
measure() { # command...
	local t0 t1
	for _ in $(seq 1 "$repeat"); do
		t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
		echo $((t1 - t0))
	done | median
}

# The chain: S01.md ... S50.md, each going to the next, the last ending;
# the same as scripts in swf/ for the baseline.
states=50
mkdir -p mwf/tests swf
{
	echo "cases:"
	echo "  - name: a chain of $states states"
	echo "    start: S01"
	echo "    model:"
	for i in $(seq 1 $states); do
		s=$(printf "S%02d" "$i") n=$(printf "S%02d" $((i + 1)))
		if [ "$i" = $states ]; then
			printf -- '---\nallowed_transitions:\n  - { tag: result }\n---\nEnd.\n' >"mwf/$s.md"
			echo "      $s: \"<result>done</result>\""
			echo 'echo "<result>done</result>"' >"swf/$s.sh"
		else
			printf -- '---\nallowed_transitions:\n  - { tag: goto, target: %s }\n---\nGo on.\n' "$n" >"mwf/$s.md"
			echo "      $s: \"<goto>$n</goto>\""
			echo "echo \"<goto>$n</goto>\"" >"swf/$s.sh"
		fi
	done
	echo "    expect:"
	echo "      path: [S01, \"...\", S$states]"
	echo "      result: done"
} >mwf/tests/chain.test.yaml
"$ray" test mwf >check.out || { cat check.out; exit 1; }

chain_test() { "$ray" test mwf --jobs 1; }
chain_run() { rm -rf .raymond; "$ray" run swf/S01.sh --quiet --no-debug; }
version() { "$ray" --version; }
c_test=$(measure chain_test)
c_run=$(measure chain_run)
c_ver=$(measure version)
# Processor time, raymond's and its children's (user + system, in ns):
# what the machine's load does not change.
cpu() { # command...
	for _ in $(seq 1 "$repeat"); do
		/usr/bin/time -f "%U %S" "$@" 2>&1 >/dev/null | tail -1 | awk '{ printf "%d\n", ($1 + $2) * 1e9 }'
	done | median
}
c_test_cpu=0 c_run_cpu=0
if [ -x /usr/bin/time ]; then
	c_test_cpu=$(cpu "$ray" test mwf --jobs 1)
	c_run_cpu=$(rm -rf .raymond; cpu "$ray" run swf/S01.sh --quiet --no-debug)
fi

# Chaos: a 10-state chain alternating markdown and script states, each
# script appending to a file the case checks, 20 kills and resumes.
mkdir -p kwf/tests
{
	echo "cases:"
	echo "  - name: ten states"
	echo "    start: K01"
	echo "    model:"
	for i in $(seq 1 10); do
		s=$(printf "K%02d" "$i") n=$(printf "K%02d" $((i + 1)))
		tag="<goto>$n</goto>"
		[ "$i" = 10 ] && tag="<result>done</result>"
		if [ $((i % 2)) = 1 ]; then
			printf 'Go on.\n' >"kwf/$s.md"
			echo "      $s: \"$tag\""
		else
			printf 'grep -qx %s log 2>/dev/null || echo %s >>log\necho "%s"\n' "$s" "$s" "$tag" >"kwf/$s.sh"
		fi
	done
	echo "    expect:"
	echo "      result: done"
	echo "      files: { log: \"K02\\nK04\\nK06\\nK08\\nK10\\n\" }"
} >kwf/tests/chain.test.yaml
"$ray" test kwf --chaos 20 >chaos.out || { cat chaos.out; exit 1; }
chaos_test() { "$ray" test kwf --jobs 2 --chaos 20; }
plain_test() { "$ray" test kwf --jobs 2; }
k_chaos=$(measure chaos_test)
k_plain=$(measure plain_test)

# The examples, each test file twice.
cp -r "$top/workflows" ex
find ex -name '*.test.yaml' | while read -r f; do cp "$f" "${f%.test.yaml}-again.test.yaml"; done
cases=$("$ray" test ex --jobs 2 | tee ex.out | grep -c '^ok ' || true)
grep -q " 0 failed" ex.out || { cat ex.out; exit 1; }
mkdir -p one
echo 'echo "<result>done</result>"' >one/START.sh
examples_test() { "$ray" test ex --jobs 2; }
one_runs() { seq 1 "$cases" | xargs -P 2 -I{} "$ray" run one --workflow-id "r{}" --quiet --no-debug; rm -rf .raymond; }
e_test=$(measure examples_test)
e_runs=$(measure one_runs)

awk -v ct="$c_test" -v cr="$c_run" -v cv="$c_ver" -v ctc="$c_test_cpu" -v crc="$c_run_cpu" -v n="$states" -v et="$e_test" -v er="$e_runs" -v k="$cases" -v kc="$k_chaos" -v kp="$k_plain" 'BEGIN {
	printf "%-34s %10.1fms %10.1fms %7.2fx   (target: 100 ms)\n", "test: a " n "-state scripted case", ct / 1e6, cr / 1e6, ct / cr
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "  the same in processor time", ctc / 1e6, crc / 1e6, ctc / crc
	printf "%-34s %10.1fms\n", "  raymond --version", cv / 1e6
	printf "%-34s %10.1fms %10.1fms %7.2fx   (target: 5 s)\n", "test: " k " cases of the examples", et / 1e6, er / 1e6, et / er
	printf "%-34s %10.1fms %10.1fms %7.2fx   (target: 10 s)\n", "test: --chaos 20, 10 states", kc / 1e6, kp / 1e6, kc / kp
}'
