#!/bin/bash
# tests/cluster/run.sh - the cluster tests (tests/cluster/t*.sh) against a
# real single-node Slurm; prints a line per file and, last, "N passed, N
# failed", like tests/run.sh.
#
#   tests/cluster/run.sh BUILD_DIR      (what `make test-cluster` runs)
#
# It starts one private cluster for all the files (slurm-up.sh, in a
# temporary folder) and stops it when it ends, on success, failure or
# interruption alike (slurm-down.sh), so no daemon and no job outlives it.
# The files run one after the other: they share the cluster, and some
# stop and start its controller.  A file still running after
# CLUSTER_FILE_SECONDS (default 300) is stopped with its process group and
# counts as a failure.
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
here="$top/tests/cluster"
ceiling=${CLUSTER_FILE_SECONDS:-300}
work=$(mktemp -d "${TMPDIR:-/tmp}/raymond-cluster.XXXXXX") || exit 1
# munged wants every folder above its socket searchable by all.
chmod 711 "$work"
export RAYMOND="$build/raymond" TESTS_TOP="$top" RAYMOND_SLURM_DIR="$work/slurm"

finish() {
	trap - EXIT INT TERM
	sh "$here/slurm-down.sh" "$RAYMOND_SLURM_DIR"
	rm -rf "$work"
}
trap finish EXIT
trap 'echo interrupted; exit 130' INT TERM

if ! out=$(sh "$here/slurm-up.sh" "$RAYMOND_SLURM_DIR" 2>&1); then
	echo "$out"
	echo "FAIL cluster: the test cluster did not start"
	echo "0 passed, 1 failed"
	exit 1
fi
eval "$(echo "$out" | grep '^export SLURM_CONF=')"

passed=0 failed=0 n=0
files=$(ls "$here"/t*.sh)
total=$(echo "$files" | wc -l)
for t in $files; do
	n=$((n + 1))
	name=${t##*/}
	log="$work/$name.log"
	start=${EPOCHREALTIME//[.,]/}
	timeout -k 10 "$ceiling" bash "$t" >"$log" 2>&1 </dev/null
	rc=$?
	tenths=$(( (${EPOCHREALTIME//[.,]/} - start) / 100000 ))
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		echo "FAIL $name: still running after $ceiling s (CLUSTER_FILE_SECONDS), stopped" >>"$log"
	elif [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log"; then
		echo "FAIL $name: exited with status $rc" >>"$log"
	fi
	# A file must leave no job of raymond's behind, passing or not; what
	# it left is cancelled so that the next file starts clean.
	left=$(squeue --noheader --format=%j 2>/dev/null | grep '^ray-')
	if [ -n "$left" ]; then
		echo "FAIL $name: left jobs in the queue: $(echo $left)" >>"$log"
		for j in $left; do scancel --name="$j"; done
	fi
	p=$(grep -a -c '^PASS' "$log")
	f=$(grep -a -c '^FAIL' "$log")
	passed=$((passed + p))
	failed=$((failed + f))
	printf '[%d/%d] cluster/%s: %d passed, %d failed, %d.%d s\n' "$n" "$total" "$name" "$p" "$f" $((tenths / 10)) $((tenths % 10))
	grep -a '^SKIP' "$log"
	if [ "$f" -gt 0 ]; then
		echo "---- $name"
		cat "$log"
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
