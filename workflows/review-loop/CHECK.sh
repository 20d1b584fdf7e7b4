#!/bin/bash
# Run the project's tests, if it has any, and hand the verdict to REVIEW.
# A script state costs nothing and needs no model: it just runs them.
if [ -f Makefile ] && grep -q '^test:' Makefile; then
	if out=$(make test 2>&1); then verdict="tests pass"; else verdict="tests fail"; fi
	tail=$(printf '%s\n' "$out" | tail -n 15 | tr '"' "'")
else
	verdict="no tests found (no Makefile with a test target)"
	tail=""
fi
printf '<goto input="%s\n%s">REVIEW</goto>\n' "$verdict" "$tail"
