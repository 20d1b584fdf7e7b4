#!/bin/bash
# The join's summary: $RAYMOND_RESULTS_FILE holds one JSON object per
# worker, in fork order: {"agent", "state", "status" (ok or failed), and
# "result" or "error"}.  Results here hold no quotes, so grep can read them.
results=$RAYMOND_RESULTS_FILE
ok=$(grep -o '"status":"ok"' "$results" | wc -l)
failed=$(grep -o '"status":"failed"' "$results" | wc -l)
grep -o '"result":"[^"]*"' "$results" | sed 's/^"result":"\(.*\)"$/\1/' >summary.txt
echo "<print>$ok measured, $failed failed:</print>"
while read -r line; do echo "<print>  $line</print>"; done <summary.txt
echo "<result>$ok measured, $failed failed</result>"
