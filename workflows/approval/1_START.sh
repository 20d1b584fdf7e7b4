# A change is proposed (its description is --input); a person approves it
# or not.  The run pauses here: with --on-ask pause raymond saves it and
# exits with status 2, printing the question as JSON; the answer comes
# back with raymond --resume ID --input TEXT.
change=${RAYMOND_INPUT:-an unnamed change}
mkdir -p approval-out
printf '%s\n' "$change" >approval-out/change.txt
echo "<print>proposed: $change</print>"
echo "<ask next=\"DECIDE.sh\" timeout=\"48h\" timeout_next=\"EXPIRED.sh\">Approve the change \"$change\"? Answer yes or no, and why.</ask>"
