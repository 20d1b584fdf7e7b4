#!/bin/bash
# Cross-workflow calls against plain calls.  Both runs make N rounds of a
# depth-4 chain of calls: the entry calls level 1, which calls level 2,
# ... level 4, which returns, and every level returns in turn.  In the
# plain run the five levels are states of one folder and call with
# <call>; in the other each level is a folder of its own and calls the
# next with <call-workflow>.  The difference per call (4 N calls) is what
# going into another workflow adds: resolving its path, the checks
# against the run's folders and the nesting depth, the frame's extra
# fields, its scope and hooks (loaded once per workflow per process).
# The same runs are timed again in raymond's own processor time (with
# perf), and bench/xworkflow.lua times the engine's part alone, in process.
#
#   bench/xworkflow.sh BUILD_DIR     N=100 by default; median of REPEAT (5)
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ray="$build/raymond"
n=${N:-100}
repeat=${REPEAT:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The entry of both: START counts the rounds in its input.
entry() { # dir call-tag target
	cat >"$1/START.sh" <<-EOS
	k=\${RAYMOND_INPUT:-0}
	if [ "\$k" -ge $n ]; then echo "<result>done</result>"; exit 0; fi
	echo "<$2 return=\"START\" input=\"\$((k + 1))\">$3</$2>"
	EOS
}
# Level i calls level i+1 with the round number and, given it back (at
# its return state), returns it; level 4 returns it at once.
level() { # file call-tag target ret-file
	if [ -n "$2" ]; then
		printf 'echo "<%s return=\\"%s\\" input=\\"$RAYMOND_INPUT\\">%s</%s>"\n' "$2" "$4" "$3" "$2" >"$1"
	else
		echo 'echo "<result>$RAYMOND_INPUT</result>"' >"$1"
	fi
}

mkdir plain
entry plain call L1
for i in 1 2 3 4; do
	if [ $i -lt 4 ]; then level plain/L$i.sh call L$((i + 1)) R$i; else level plain/L4.sh "" "" ""; fi
	echo "echo \"<result>\$RAYMOND_INPUT</result>\"" >plain/R$i.sh
done

mkdir -p xwf/top
entry xwf/top call-workflow ../w1
for i in 1 2 3 4; do
	mkdir -p xwf/w$i
	if [ $i -lt 4 ]; then level xwf/w$i/1_START.sh call-workflow ../w$((i + 1)) R; else level xwf/w4/1_START.sh "" "" ""; fi
	echo "echo \"<result>\$RAYMOND_INPUT</result>\"" >xwf/w$i/R.sh
done

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_ns() { local t0 t1; t0=$(now); "$@" >/dev/null 2>&1; t1=$(now); echo $((t1 - t0)); }
run_plain() { rm -rf .raymond; "$ray" plain --quiet; }
run_xwf() { rm -rf .raymond; "$ray" xwf/top --quiet; }

test "$("$ray" plain --quiet 2>/dev/null)" = done
test "$("$ray" xwf/top --quiet 2>/dev/null)" = done
# Alternated, so a change of the machine's load hits both alike.
for _ in $(seq 1 "$repeat"); do
	echo "p $(time_ns run_plain)"
	echo "x $(time_ns run_xwf)"
done >times
p=$(sed -n 's/^p //p' times | median)
x=$(sed -n 's/^x //p' times | median)
# raymond's own processor time (perf stat -i counts no child), which a
# busy machine moves far less than the wall clock; skipped without perf.
cpu_ms() { rm -rf .raymond; perf stat -i -e task-clock -x, "$ray" "$1" --quiet 2>&1 >/dev/null | cut -d, -f1; }
cp=0 cx=0
if perf stat -i -e task-clock -x, true >/dev/null 2>&1; then
	for _ in $(seq 1 "$repeat"); do
		echo "p $(cpu_ms plain)"
		echo "x $(cpu_ms xwf/top)"
	done >cpu
	cp=$(sed -n 's/^p //p' cpu | median)
	cx=$(sed -n 's/^x //p' cpu | median)
fi
engine=$("$build/tests/luarun" "$top/tests/lua/testing.lua" "$top/bench/xworkflow.lua" | grep '^XWF')
awk -v p="$p" -v x="$x" -v n="$n" -v en="$engine" -v cp="$cp" -v cx="$cx" 'BEGIN {
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "depth-4 call-workflow, " n " rounds", x / 1e6, p / 1e6, x / p
	printf "%-34s %10.3fms\n", "cost per cross-workflow call", (x - p) / (4 * n) / 1e6
	if (cp > 0) {
		printf "%-34s %10.1fms %10.1fms %7.2fx\n", "  raymond'"'"'s own CPU (perf stat -i)", cx, cp, cx / cp
		printf "%-34s %10.3fms\n", "CPU per cross-workflow call", (cx - cp) / (4 * n)
	}
	split(en, e, " ")
	printf "%-34s %10.1fus %10.1fus\n", "engine: call-workflow + result", e[3], e[2]
}'
