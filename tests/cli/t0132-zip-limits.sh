#!/bin/bash
# Workflow archives from elsewhere: zip bombs are refused when the archive
# is opened, before anything is unpacked, by caps on the total size, the
# number of files and the size of one file (RAYMOND_ZIP_MAX_BYTES,
# RAYMOND_ZIP_MAX_FILES, RAYMOND_ZIP_MAX_FILE_BYTES); and a run is pinned
# to the archive it hashed: another archive renamed over it mid-run does
# not change the run, one rewritten in place is refused at its next read,
# and --resume refuses either.
. "$(dirname "$0")/lib.sh"

MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

HINT="hint: if you trust this archive, raise the limit it names: RAYMOND_ZIP_MAX_BYTES (all files together), RAYMOND_ZIP_MAX_FILES or RAYMOND_ZIP_MAX_FILE_BYTES (one file)"

# bomb: bomb.zip, 5 files of 60 MiB of zeros (300 MiB, under 64 MiB
# each) and START.sh, in about 300 KiB.
bomb() {
	mkdir -p flow &&
	echo "echo \"<result>unpacked</result>\"" >flow/START.sh &&
	head -c $((60 << 20)) /dev/zero >zeros &&
	"$MKZIP" bomb.zip START.sh=flow/START.sh a.bin=zeros b.bin=zeros c.bin=zeros d.bin=zeros e.bin=zeros &&
	rm zeros &&
	test "$(stat -c %s bomb.zip)" -lt 1000000
}

# refused MESSAGE: the run of bomb.zip is refused with MESSAGE and the
# hint, and nothing was unpacked.
refused() {
	expect_status 1 raymond bomb.zip 2>err &&
	cat err &&
	grep -qF "raymond: error: archive '$PWD/bomb.zip' $1" err &&
	grep -qF "$HINT" err &&
	test ! -e .raymond/extract
}

test_expect_success 'an archive unpacking to more than 256 MiB is refused before anything is unpacked' '
	bomb &&
	refused "holds more than 268435456 bytes uncompressed, the limit for all its files together"
'

test_expect_success 'the caps on files and on one file are refused alike, and each can be raised' '
	bomb &&
	export RAYMOND_ZIP_MAX_BYTES=400000000 &&
	RAYMOND_ZIP_MAX_FILES=5 refused "has 6 files, more than the limit of 5 files" &&
	RAYMOND_ZIP_MAX_FILE_BYTES=1000000 refused "has '"'"'a.bin'"'"' of 62914560 bytes uncompressed, more than the limit of 1000000 bytes per file" &&
	raymond bomb.zip --quiet >out &&
	test "$(cat out)" = unpacked
'

test_expect_success 'a cap that is not a whole number is an error' '
	bomb &&
	RAYMOND_ZIP_MAX_FILES=lots expect_status 1 raymond bomb.zip 2>err &&
	grep -qF "raymond: error: RAYMOND_ZIP_MAX_FILES must be a whole number, not '"'"'lots'"'"'" err
'

# flow.zip: START.sh waits for ./go, then goes to NEXT.md, read from the
# archive when it is reached; other.zip has another NEXT.md.
pinned_flow() {
	mkdir -p flow other &&
	cat >flow/START.sh <<-\EOS &&
	touch started
	i=0
	while [ ! -e go ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done
	echo "<goto>NEXT.md</goto>"
	EOS
	printf "%s\n" "first NEXT" "MOCK: reply <result>from the first archive</result>" >flow/NEXT.md &&
	printf "%s\n" "other NEXT" "MOCK: reply <result>from the other archive</result>" >other/NEXT.md &&
	"$MKZIP" flow.zip START.sh=flow/START.sh NEXT.md=flow/NEXT.md &&
	"$MKZIP" other.zip START.sh=flow/START.sh NEXT.md=other/NEXT.md &&
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake &&
	mkdir -p fake
}


test_expect_success 'another archive renamed over the path mid-run does not change the run; --resume refuses it' '
	pinned_flow &&
	{ "$RAYMOND" flow.zip --quiet >out 2>err & } &&
	wait_for_file started &&
	cp other.zip new.zip && mv new.zip flow.zip &&
	touch go &&
	wait $! &&
	test "$(cat out)" = "from the first archive" &&
	rm -f go started &&
	"$MKZIP" again.zip START.sh=flow/START.sh NEXT.md=flow/NEXT.md &&
	{ "$RAYMOND" again.zip --quiet >out 2>err & } &&
	wait_for_file started && kill -INT $! &&
	{ wait $! || true; } &&
	cp other.zip again.zip &&
	expect_status 1 raymond --resume "$(ls .raymond/state | sed -n "s/\.json$//p" | tail -1)" 2>err &&
	grep -q "changed since the run started" err
'

test_expect_success 'an archive rewritten in place mid-run is refused at its next read' '
	pinned_flow &&
	{ "$RAYMOND" flow.zip --quiet >out 2>err & } &&
	wait_for_file started &&
	cat other.zip >flow.zip &&
	touch go &&
	{ wait $! && exit 1 || true; } &&
	cat err &&
	grep -qF "archive '"'"'$PWD/flow.zip'"'"' was rewritten after it was opened, so its SHA-256 " err &&
	grep -qF "no longer vouches for what would be read" err &&
	test ! -s out &&
	test ! -e fake/log.jsonl
'

test_done
