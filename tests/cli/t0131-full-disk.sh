#!/bin/bash
# A nearly full disk: when there is room for the state file but not for
# the journal laid down beside it, the journal is given up (its partial
# file removed, so it keeps no space the state file needs) and every save
# goes to the state file; the run finishes as it would have.  Shown with
# tests/fault/faultfs.c's "space" form (a disk with N bytes free), and on a
# real tmpfs of 400 KiB where mounting one works (as root); otherwise that
# case says SKIP.  The journal needs at least 1 MiB.
. "$(dirname "$0")/lib.sh"


# finished DIR: the run under DIR/.raymond completed every step once, and
# left no journal behind.
finished() {
	test "$(cat out)" = "done 10" &&
	test ! -s err &&
	test "$(sort chain.log | uniq | wc -l)" = 10 &&
	test "$(wc -l <chain.log)" = 10 &&
	grep -q "\"status\":\"completed\"" "$1"/.raymond/state/*.json &&
	test -z "$(ls "$1"/.raymond/state | grep -v "\.json$")"
}

# 4 zero-filled chunks of 64 KiB and 3000 bytes more: a journal laid down
# until the disk is full would leave too little for the state file's
# saves (about 700 bytes each).
test_expect_success 'a disk with room for the state file but not the journal: the run finishes' '
	chain &&
	mkdir -p proj/.git &&
	(cd proj && env LD_PRELOAD="$SHIM" RAYMOND_FAULT="space:.raymond/:265144" \
		"$RAYMOND" ../wf/STEP.sh --input 1 --quiet --no-debug) >out 2>err &&
	finished proj
'

# in_tmpfs CMD: run CMD (a shell command) in a private mount namespace with
# a 400 KiB tmpfs mounted on ./small, which goes away with the namespace.
in_tmpfs() {
	mkdir -p small &&
	unshare -m sh -c "mount -t tmpfs -o size=400k tmpfs small && $1"
}

if in_tmpfs true 2>/dev/null; then
	test_expect_success 'a real 400 KiB file system: the journal does not fit, the run finishes' '
		chain &&
		in_tmpfs "mkdir small/.git && cd small &&
			\"$RAYMOND\" ../wf/STEP.sh --input 1 --quiet --no-debug >../out 2>../err;
			mkdir ../seen && cp -r .raymond ../seen/" &&
		cat err &&
		finished seen
	'
else
	echo "SKIP $TEST_NAME: a real 400 KiB file system (cannot mount a tmpfs here)"
fi

test_done
