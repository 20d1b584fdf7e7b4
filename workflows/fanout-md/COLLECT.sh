#!/bin/bash
# The summarisers run in parallel with this state: wait until each file
# listed in summaries/expected.txt has its summary (at most ten minutes).
want=$(grep -c . summaries/expected.txt 2>/dev/null || echo 0)
for _ in $(seq 1 600); do
	have=$(ls summaries/*.txt 2>/dev/null | grep -vc expected.txt)
	[ "$have" -ge "$want" ] && break
	sleep 1
done
echo "<result>$have of $want summaries written to summaries/</result>"
