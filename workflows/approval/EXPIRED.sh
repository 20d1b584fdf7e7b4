# Nobody answered within the ask's timeout: the change is left as it was.
echo "<result>no answer in time; $(head -1 approval-out/change.txt) was not applied</result>"
