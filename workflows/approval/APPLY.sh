# Approved: the change is applied (here: marked as applied).
touch approval-out/applied
echo "<result>approved and applied: $(head -1 approval-out/change.txt)</result>"
