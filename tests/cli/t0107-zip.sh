#!/bin/bash
# Workflows in zip archives: layouts, bad archives, hashes in names, the
# private extracted copy, hooks inside the archive, and --resume checks.
. "$(dirname "$0")/lib.sh"

MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

# flow/: a two-step script workflow whose second state fails until `fixed`
# exists in the working directory.
make_flow() {
	mkdir -p flow
	printf '%s\n' 'echo "<print>dir=$RAYMOND_STATE_DIR</print>"' 'echo "<goto>B</goto>"' >flow/START.sh
	printf '%s\n' 'echo ran >>"$OLDPWD_LOG"' \
		'if [ -e fixed ]; then echo "<result>done from zip</result>"; else exit 3; fi' >flow/B.sh
}

zip_single() { "$MKZIP" "$1" flow/ flow/START.sh=flow/START.sh flow/B.sh=flow/B.sh; }

test_expect_success 'a single-folder archive runs from a private copy removed afterwards' '
	make_flow && touch fixed &&
	export OLDPWD_LOG=$PWD/log &&
	zip_single flow.zip &&
	cp flow.zip before.zip &&
	raymond flow.zip >out 2>err &&
	grep -qx "done from zip" out &&
	dir=$(sed -n "s/^dir=//p" out) &&
	case "$dir" in "$PWD"/.raymond/extract/*) ;; *) echo "scripts ran from $dir"; exit 1 ;; esac &&
	test ! -e "$dir" &&
	cmp flow.zip before.zip
'

test_expect_success 'a flat archive runs too, and hooks.lua inside it is honoured' '
	make_flow && touch fixed &&
	export OLDPWD_LOG=$PWD/log &&
	printf "%s\n" "return { PreTransition = function(ev) raymond.log(\"zip hook: \" .. ev.state) end }" >flow/hooks.lua &&
	"$MKZIP" flat.zip START.sh=flow/START.sh B.sh=flow/B.sh hooks.lua=flow/hooks.lua &&
	raymond flat.zip >out 2>err &&
	grep -qx "done from zip" out &&
	grep -q "zip hook: START.sh" err &&
	raymond --status "$(run_id)" | grep -q "flat.zip/hooks.lua"
'

test_expect_success 'markdown states are read from the archive' '
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake &&
	mkdir -p fake md &&
	printf "%s\n" "---" "model: haiku" "---" "from the archive" "MOCK: reply <result>md ok</result>" >md/START.md &&
	"$MKZIP" md.zip START.md=md/START.md &&
	raymond md.zip --quiet >out &&
	test "$(cat out)" = "md ok" &&
	grep -q "from the archive" fake/log.jsonl
'

# bad NAME ENTRIES... expect: raymond refuses NAME.zip with MESSAGE.
refuses() {
	msg=$1; shift
	"$MKZIP" bad.zip "$@" &&
	expect_status 1 raymond bad.zip 2>err &&
	grep -q "$msg" err &&
	test ! -e .raymond/state/*.json
}

test_expect_success 'bad layouts are refused with a clear error' '
	make_flow &&
	refuses "several top-level folders" a/ a/START.sh=flow/START.sh b/ b/B.sh=flow/B.sh &&
	refuses "mixes files and folders" START.sh=flow/START.sh sub/ &&
	refuses "too deeply" flow/ flow/sub/ flow/sub/START.sh=flow/START.sh &&
	refuses "too deeply" START.sh=flow/START.sh sub/x.sh=flow/B.sh &&
	refuses "no files" empty/ &&
	refuses "segment" ../START.sh=flow/START.sh &&
	refuses "absolute name" /START.sh=flow/START.sh
'

test_expect_success 'a SHA-256 in the name is checked' '
	make_flow && touch fixed &&
	export OLDPWD_LOG=$PWD/log &&
	zip_single tmp.zip &&
	sum=$(sha256sum tmp.zip | cut -d" " -f1) &&
	cp tmp.zip "flow-$sum.zip" &&
	raymond "flow-$sum.zip" --quiet >out &&
	grep -qx "done from zip" out &&
	wrong=$(printf "%064d" 0) &&
	cp tmp.zip "flow-$wrong.zip" &&
	expect_status 1 raymond "flow-$wrong.zip" 2>err &&
	grep -q "but its SHA-256 is $sum" err
'

test_expect_success '--resume checks the archive is still there and unchanged' '
	make_flow &&
	export OLDPWD_LOG=$PWD/log &&
	zip_single flow.zip &&
	expect_status 1 raymond flow.zip --quiet 2>/dev/null &&
	id=$(run_id) &&
	mv flow.zip away.zip &&
	expect_status 1 raymond --resume "$id" 2>err &&
	grep -q "is gone" err &&
	printf "%s\n" "echo changed" >>flow/START.sh &&
	zip_single flow.zip &&
	expect_status 1 raymond --resume "$id" 2>err &&
	grep -q "changed since the run started" err &&
	mv away.zip flow.zip && touch fixed &&
	raymond --resume "$id" --quiet >out &&
	grep -qx "done from zip" out
'

test_expect_success 'a copy left by a killed run is replaced on --resume and removed at the end' '
	make_flow &&
	export OLDPWD_LOG=$PWD/log &&
	printf "%s\n" "touch started; for _ in \$(seq 1 1200); do [ -e go ] && break; sleep 0.05; done" \
		"echo \"<result>after kill</result>\"" >flow/B.sh &&
	zip_single flow.zip
	"$RAYMOND" flow.zip --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	ls -d .raymond/extract/*/ >/dev/null &&
	kill -9 $pid && wait $pid 2>/dev/null; rm -f started &&
	touch go &&
	raymond --resume "$(run_id)" --quiet >out &&
	grep -qx "after kill" out &&
	test -z "$(ls .raymond/extract)"
'
test_done
