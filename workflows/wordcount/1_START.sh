#!/bin/bash
# Count the words of the input and find the longest; runs on its own
# (raymond workflows/wordcount --input "...") or called by report/.
set -f
words=0 longest=
for w in $RAYMOND_INPUT; do
	words=$((words + 1))
	[ ${#w} -gt ${#longest} ] && longest=$w
done
echo "<goto input=\"$words words, longest: ${longest:-none}\">SAY</goto>"
