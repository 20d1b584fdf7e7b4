#!/bin/bash
# A worker: measures its word, and fails on one that is not all letters.
# In a join a failure does not stop the run: SUMMARY sees it, with its error.
case $word in
*[!A-Za-z]*)
	echo "'$word' is not a word" >&2
	exit 1
	;;
esac
sleep 0.2
echo "<result>$word has ${#word} letters</result>"
