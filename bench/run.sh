#!/bin/bash
# Benchmarks; prints a table.  Usage: bench/run.sh BUILD_DIR
#
# Each figure is a ratio against a baseline measured in the same run, so
# the numbers mean the same on a fast or a slow machine:
#   chain   a 1000-step script chain through raymond, against bash running
#           the same script 1000 times in a loop (the cost of the scripts
#           themselves); the difference divided by the steps is raymond's
#           own cost per transition, state file fsync included.
#   startup `raymond --version` against `true`.
# Times are the median of REPEAT runs (default 5).
set -eu
build=$(cd "${1:-build}" && pwd)
ray="$build/raymond"
repeat=${REPEAT:-5}
steps=${STEPS:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir wf
cat >wf/STEP.sh <<EOS
n=\$RAYMOND_INPUT
if [ "\$n" -ge $steps ]; then echo "<result>\$n</result>"; else echo "<goto input=\"\$((n + 1))\">STEP</goto>"; fi
EOS

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

time_ns() { # command...
	local t0 t1
	t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
	echo $((t1 - t0))
}

bash_chain() {
	local i=1
	while [ $i -le "$steps" ]; do
		RAYMOND_INPUT=$i bash wf/STEP.sh >/dev/null
		i=$((i + 1))
	done
}
ray_chain() { rm -rf .raymond; "$ray" wf/STEP.sh --input 1 --quiet --no-debug; }
ver() { "$ray" --version; }
tru() { /bin/true; }
ver_loop() { for _ in $(seq 1 100); do "$ray" --version; done; }
true_loop() { for _ in $(seq 1 100); do /bin/true; done; }

measure() { for _ in $(seq 1 "$repeat"); do time_ns "$@"; done | median; }

b=$(measure bash_chain)
r=$(measure ray_chain)
v=$(measure ver_loop)
t=$(measure true_loop)

awk -v r="$r" -v b="$b" -v v="$v" -v t="$t" -v n="$steps" 'BEGIN {
	printf "%-34s %12s %12s %8s\n", "benchmark", "raymond", "baseline", "ratio"
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "chain of " n " script steps", r / 1e6, b / 1e6, r / b
	printf "%-34s %10.3fms\n", "raymond cost per transition", (r - b) / n / 1e6
	printf "%-34s %10.3fms %10.3fms %7.2fx\n", "raymond --version (one run)", v / 100 / 1e6, t / 100 / 1e6, v / t
}'
