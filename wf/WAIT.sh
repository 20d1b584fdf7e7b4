while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
echo "<result>done</result>"
