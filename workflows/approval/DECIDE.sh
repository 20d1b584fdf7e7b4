# The reviewer's answer is the input: yes (or y) approves, anything else
# rejects, and the answer is kept with the change.
# Written once: run again after a crash (before its transition was
# saved), the script must not record the answer twice.
answer=$RAYMOND_INPUT
grep -qxF "review: $answer" approval-out/change.txt ||
	printf 'review: %s\n' "$answer" >>approval-out/change.txt
case $answer in
[Yy]|[Yy][Ee][Ss]|[Yy][Ee][Ss][^A-Za-z]*) echo "<goto input=\"$answer\">APPLY.sh</goto>" ;;
*) echo "<result>rejected: $answer</result>" ;;
esac
