#!/bin/sh
# Run each fuzz target for a fixed time on a copy of its seed corpus.
#
# usage: fuzz/run.sh BUILD SECONDS TARGET...   (from the top of the tree;
#        `make fuzz` runs it)
#
# BUILD/fuzz_TARGET runs on BUILD/run/TARGET/corpus, a fresh copy of
# fuzz/corpus/TARGET (the checked-in seeds never change), with the
# dictionary fuzz/TARGET.dict if there is one.  fuzz/crashes/ is never
# used.  Any crash, leak, timeout or out-of-memory fails the run: the log
# is BUILD/run/TARGET/log, the input that did it is in
# BUILD/run/TARGET/artifacts/.  Exit status 0 when every target ran clean.
set -u

build=$1
secs=$2
shift 2

symbolizer=/usr/lib/llvm-14/bin/llvm-symbolizer
[ -x "$symbolizer" ] && export ASAN_SYMBOLIZER_PATH="$symbolizer"
export UBSAN_OPTIONS="print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Checks for known open bugs are on only with RAYMOND_FUZZ_STRICT=1 in the
# environment (see fuzz/README.md).
[ "${RAYMOND_FUZZ_STRICT:-}" = 1 ] && echo "fuzz: RAYMOND_FUZZ_STRICT=1: checking known open bugs too"

failed=""
for t in "$@"; do
	work=$build/run/$t
	rm -rf "$work"
	mkdir -p "$work/corpus" "$work/artifacts"
	cp fuzz/corpus/"$t"/* "$work/corpus/"
	seeds=$(ls "$work/corpus" | wc -l)
	dict=""
	[ -f "fuzz/$t.dict" ] && dict="-dict=fuzz/$t.dict"
	start=$(date +%s)
	# shellcheck disable=SC2086
	"$build/fuzz_$t" -max_total_time="$secs" -rss_limit_mb=1024 \
	    -timeout=10 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
	    $dict "$work/corpus" >"$work/log" 2>&1
	rc=$?
	took=$(($(date +%s) - start))
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log")
	cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n 1)
	found=$(ls "$work/artifacts" | head -n 1)
	if [ "$rc" -eq 0 ] && [ -z "$found" ]; then
		echo "fuzz $t: ${runs:-?} runs in ${took}s, $seeds seeds, $cov, corpus now $(ls "$work/corpus" | wc -l): ok"
		continue
	fi
	failed="$failed $t"
	echo "fuzz $t: FAILED (exit status $rc) after ${took}s" >&2
	grep -E -m 12 '^(==[0-9]+==|SUMMARY|==fuzz==|.*runtime error|.*(ERROR|WARNING): libFuzzer)' \
	    "$work/log" | sed 's/^/    /' >&2
	if [ -n "$found" ]; then
		echo "    input: $work/artifacts/$found" >&2
		echo "    again: $build/fuzz_$t $work/artifacts/$found" >&2
	fi
	echo "    log:   $work/log" >&2
	echo "    if it is a bug of raymond, keep the input as fuzz/crashes/$t-SHORT-NAME" >&2
done

if [ -n "$failed" ]; then
	echo "fuzz: failed:$failed" >&2
	exit 1
fi
