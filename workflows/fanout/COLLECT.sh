#!/bin/bash
# Main waits until every worker has written its file, then reports.  The
# workers run alongside this state, so it polls rather than assumes.
want=$RAYMOND_INPUT
for _ in $(seq 1 100); do
	[ "$(ls fanout-out/*.txt 2>/dev/null | wc -l)" -ge "$want" ] && break
	sleep 0.1
done
echo "<result>$(cat fanout-out/*.txt | sort | paste -sd ';')</result>"
