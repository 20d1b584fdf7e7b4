#!/bin/bash
# Count down: each step resets to itself with one less, then ends.
n=${RAYMOND_INPUT:-0}
if [ "$n" -gt 0 ]; then
	echo "<print>$n...</print>"
	echo "<reset input=\"$((n - 1))\">COUNT</reset>"
else
	echo "<result>liftoff</result>"
fi
