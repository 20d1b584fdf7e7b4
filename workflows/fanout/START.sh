#!/bin/bash
# Fan out: one worker agent per word of the input, running in parallel.
# Several <fork> tags and one <goto> in one output: the workers start at
# WORKER, and main goes on to COLLECT with the number of workers as input.
words=${RAYMOND_INPUT:-"alpha beta gamma"}
mkdir -p fanout-out
rm -f fanout-out/*.txt
n=0
for w in $words; do
	echo "<fork word=\"$w\">WORKER</fork>"
	n=$((n + 1))
done
echo "<goto input=\"$n\">COLLECT</goto>"
