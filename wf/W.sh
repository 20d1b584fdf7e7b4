echo "<print>worker says hi</print>"
while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
echo "<result>w</result>"
