#!/bin/bash
# Route on the classifier's answer, which arrives as $RAYMOND_RESULT.
case "$RAYMOND_RESULT" in
POSITIVE) echo "<goto>THANK</goto>" ;;
NEGATIVE) echo "<goto>APOLOGISE</goto>" ;;
*) echo "<result>filed as neutral</result>" ;;
esac
