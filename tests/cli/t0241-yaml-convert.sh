#!/bin/bash
# raymond convert: a workflow folder or archive as one YAML file that runs,
# lints and draws as the folder does; what it cannot carry is refused.
. "$(dirname "$0")/lib.sh"

top=$TESTS_TOP

test_expect_success 'the script examples run the same converted: hello, fanout' '
	raymond convert "$top/workflows/hello" --output hello.yaml &&
	raymond "$top/workflows/hello" --input you >want 2>/dev/null &&
	raymond hello.yaml --input you >got 2>/dev/null &&
	cmp want got &&
	raymond convert "$top/workflows/fanout" >fanout.yaml &&
	raymond "$top/workflows/fanout" --input "one three" --quiet >want &&
	raymond fanout.yaml --input "one three" --quiet >got &&
	test "$(tail -1 want)" = "$(tail -1 got)" &&
	test "$(tail -1 got)" = "one has 3 letters;three has 5 letters"
'

test_expect_success 'every example converts, and lints and draws as the folder does' '
	# Each YAML file goes beside a link to every example, so a path to
	# another workflow (report calls ../wordcount) leads where it did.
	mkdir ex && ln -s "$top"/workflows/*/ ex/ &&
	for d in "$top"/workflows/*/; do
		name=$(basename "$d")
		raymond convert "$d" --output "ex/$name.yaml" || return 1
		raymond lint --level info "$d" | sed "s|^[^:]*/workflows/$name/[^:]*|X|" >lint.want || true
		raymond lint --level info "ex/$name.yaml" | sed "s|^ex/$name.yaml|X|" >lint.got || true
		# The same findings, at other line numbers.
		diff <(sed "s/^X:[0-9]*:/X:/" lint.want | sort) <(sed "s/^X:[0-9]*:/X:/" lint.got | sort) || return 1
		raymond diagram "$d" >want.mmd &&
		raymond diagram "ex/$name.yaml" >got.mmd &&
		diff want.mmd got.mmd || return 1
	done
'

test_expect_success 'a converted markdown workflow with hooks runs the same (classify, test-router)' '
	use_fake &&
	cp -r "$top/workflows/classify" classify &&
	printf "\nMOCK: reply noted\n" >>classify/1_START.md &&
	printf "\nMOCK: reply <result>NEGATIVE</result>\n" >>classify/CLASSIFY.md &&
	printf "\nMOCK: reply <result>We are sorry.</result>\n" >>classify/APOLOGISE.md &&
	raymond convert classify --output classify.yaml &&
	raymond classify --input "it broke" >want 2>want.err &&
	raymond classify.yaml --input "it broke" >got 2>got.err &&
	cmp want got &&
	test "$(cat got)" = "We are sorry." &&
	grep "\-> " want.err | sed "s/[0-9.]*s$//" >want.steps &&
	grep "\-> " got.err | sed "s/[0-9.]*s$//" >got.steps &&
	cmp want.steps got.steps &&
	cp -r "$top/workflows/test-router" router &&
	printf "\nMOCK: reply <goto>IMPLEMENT</goto>\n" >>router/1_START.md &&
	printf "\nMOCK: reply <goto>COMMIT</goto>\n" >>router/IMPLEMENT.md &&
	printf "\nMOCK: reply <result>fixed it</result>\n" >>router/COMMIT.md &&
	raymond convert router --output router.yaml &&
	grep -q "^hooks:" router.yaml &&
	printf "%s\n" "n=\$(cat runs 2>/dev/null || echo 0); echo \$((n + 1)) >runs" \
	    "[ \$n -ge 1 ] || { echo FAILED; exit 1; }" >check.sh &&
	RAYMOND_TEST_COMMAND="sh check.sh" raymond router.yaml --input x >out 2>err &&
	test "$(cat out)" = "fixed it" &&
	test "$(cat runs)" = 2 &&
	grep -q "router.yaml:[0-9]* PreTransition: routed IMPLEMENT.md -> goto IMPLEMENT.md" err
'

test_expect_success 'text a block cannot hold is quoted, and still runs as written' '
	mkdir wf &&
	printf "echo \"<result>a\tb\033c</result>\"\n" >wf/START.sh &&
	printf "   echo \"<result>spaced</result>\"\n\n\n" >wf/OTHER.sh &&
	printf "echo \"<result>\$RAYMOND_STATE_DIR</result>\"\n" >wf/DIR.sh &&
	raymond convert wf >wf.yaml 2>err &&
	grep -qx "raymond: warning: DIR.sh uses \$RAYMOND_STATE_DIR or \$RAYMOND_STATE_FILE: in the YAML workflow they are the YAML file.s folder and a private copy of the script" err &&
	test "$(wc -l <err)" = 1 &&
	grep -q "^    sh: \"echo" wf.yaml &&
	grep -q "^    sh: |2+" wf.yaml &&
	raymond wf/START.sh >want 2>/dev/null &&
	raymond wf.yaml >got 2>/dev/null &&
	cmp want got &&
	raymond wf.yaml/OTHER >got 2>/dev/null &&
	test "$(cat got)" = spaced
'

test_expect_success 'a YAML workflow, a state file, a folder with other files are refused' '
	printf "states:\n  START:\n    sh: x\n" >wf.yaml &&
	expect_status 1 raymond convert wf.yaml 2>err &&
	grep -q "wf.yaml is already a YAML workflow" err &&
	mkdir wf &&
	printf "echo \"<result>x</result>\"\n" >wf/START.sh &&
	expect_status 1 raymond convert wf/START.sh 2>err &&
	grep -q "convert takes a workflow folder or a .zip archive, not a state file" err &&
	echo data >wf/items.txt &&
	mkdir wf/lib &&
	expect_status 1 raymond convert wf >out 2>err &&
	test ! -s out &&
	grep -q "wf holds files a YAML workflow cannot carry: items.txt, lib/" err &&
	rm -r wf/items.txt wf/lib &&
	printf "<result>y</result>\n" >wf/END.md &&
	printf "echo \"<result>y</result>\"\n" >wf/END.sh &&
	expect_status 1 raymond convert wf 2>err &&
	grep -q "state END is both END.md and END.sh" err
'

test_expect_success 'the original'"'"'s manifest becomes the top-level keys; other keys in it are refused' '
	mkdir wf &&
	printf "echo \"<result>ok</result>\"\n" >wf/START.sh &&
	printf -- "---\nid: demo # kept\nname: Demo\n" >wf/workflow.yaml &&
	raymond convert wf >wf.yaml &&
	head -2 wf.yaml >top &&
	printf "id: demo # kept\nname: Demo\n" >want &&
	cmp want top &&
	raymond wf.yaml >out 2>/dev/null &&
	test "$(cat out)" = ok &&
	printf "id: demo\nstates: {}\n" >wf/workflow.yaml &&
	expect_status 1 raymond convert wf 2>err &&
	grep -q "wf/workflow.yaml:2: .states. is not a manifest key" err
'

test_expect_success 'an archive converts; --output replaces a file whole' '
	mkdir src &&
	printf "echo \"<goto>END</goto>\"\n" >src/START.sh &&
	printf "echo \"<result>zipped</result>\"\n" >src/END.sh &&
	"$(dirname "$RAYMOND")/tests/mkzip" wf.zip START.sh=src/START.sh END.sh=src/END.sh &&
	echo old >out.yaml &&
	raymond convert wf.zip --output out.yaml &&
	head -1 out.yaml | grep -qx "states:" &&
	raymond out.yaml >got 2>/dev/null &&
	test "$(cat got)" = zipped
'

test_done
