#!/bin/bash
# Fan out and join: one worker per word of the input, all joined by
# SUMMARY.  Every <fork> of the reply names the same join=; main goes on
# to DONE at once, and SUMMARY starts, as an agent of its own, once every
# worker has ended.
words=${RAYMOND_INPUT:-"alpha beta gamma"}
for w in $words; do
	echo "<fork next=\"DONE\" join=\"SUMMARY\" word=\"$w\">WORKER</fork>"
done
