#!/bin/bash
# raymond diagram: the Mermaid text of each example workflow (goldens in
# tests/cli/diagram/), names that are not safe Mermaid, --output and
# --html, and the errors for what is not a workflow.
. "$(dirname "$0")/lib.sh"

top=${TESTS_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

# err_is MESSAGE [HINT] -- CMD...: CMD exits with status 1, prints nothing
# on stdout, and "raymond: error: MESSAGE" (then "hint: HINT") is its
# whole stderr.
err_is() {
	msg=$1 hint=
	shift
	if [ "$1" != -- ]; then hint=$1; shift; fi
	shift
	expect_status 1 "$@" >out 2>err || return 1
	{ echo "raymond: error: $msg"; [ -z "$hint" ] || echo "hint: $hint"; } >want
	test ! -s out || { echo "stdout not empty:"; cat out; return 1; }
	cmp -s want err || { echo "stderr differs:"; diff want err; return 1; }
}

for wf in "$top"/workflows/*/; do
	name=$(basename "$wf")
	test_expect_success "$name: the Mermaid text is the golden one" '
		raymond diagram "$wf" >out 2>err &&
		test ! -s err &&
		diff -u "$top/tests/cli/diagram/$name.mmd" out
	'
done

test_expect_success 'a relative path, a state file and a .zip archive are drawn too' '
	cp -r "$top/workflows/review-loop" . &&
	raymond diagram review-loop >dir.mmd &&
	diff -u "$top/tests/cli/diagram/review-loop.mmd" dir.mmd &&
	raymond diagram review-loop/1_START.md >file.mmd &&
	diff -u "$top/tests/cli/diagram/review-loop.mmd" file.mmd &&
	(cd review-loop && for f in *; do if [ -f "$f" ]; then echo "$f=$f"; fi; done) >entries &&
	(cd review-loop && xargs "$(dirname "$RAYMOND")/tests/mkzip" ../rl.zip <../entries) &&
	raymond diagram rl.zip >zip.mmd &&
	diff -u "$top/tests/cli/diagram/review-loop.mmd" zip.mmd
'

test_expect_success 'state names that are not safe in Mermaid get plain ids and escaped labels' '
	state START.sh <<-\EOS &&
	echo "<goto>end</goto>"
	echo "<call return=\"a-b\">x y</call>"
	EOS
	echo "<result>x</result>" >wf/end.md &&
	echo "<goto>a_b</goto>" >wf/a-b.md &&
	echo "<result>x</result>" >wf/a_b.md &&
	echo "<result>x</result>" >"wf/x y.md" &&
	echo "<result>x</result>" >"wf/q\"[|]#<b>&.md" &&
	raymond diagram wf >out &&
	cat out &&
	grep -qx "  s_end_md\[\"end.md\"\]" out &&
	grep -qx "  s_a_b_md\[\"a-b.md\"\]" out &&
	grep -qx "  s_a_b_md_2\[\"a_b.md\"\]" out &&
	grep -qx "  s_x_y_md\[\"x y.md\"\]" out &&
	grep -qxF "  s_q______b___md[\"q#34;#91;#124;#93;#35;#60;b#62;#38;.md\"]" out &&
	grep -qxF "  s_START_sh -->|\"goto\"| s_end_md" out &&
	grep -qxF "  s_START_sh -->|\"call\"| s_x_y_md" out &&
	grep -qxF "  s_x_y_md -->|\"return\"| s_a_b_md" out &&
	grep -qxF "  s_a_b_md -->|\"goto\"| s_a_b_md_2" out &&
	# Every node id is letters, digits and _, and no label holds a sign
	# Mermaid reads (a quote, a bracket, a bar, <, &) other than in #N;.
	sed -n "s/^  \([^][({ ]*\)[[({].*/\1/p" out >ids &&
	test "$(wc -l <ids)" = 8 &&
	test "$(grep -cv "^[A-Za-z0-9_]*$" ids)" = 0 &&
	test "$(grep -o "\"[^\"]*\"" out | sed "s/#[0-9]*;//g" | grep -c "[][|<>&#]")" = 0
'

test_expect_success '--output writes the file whole, replacing the old one; --html writes the page' '
	echo old >d.mmd &&
	raymond diagram "$top/workflows/hello" --output d.mmd >out 2>err &&
	test ! -s out && test ! -s err &&
	diff -u "$top/tests/cli/diagram/hello.mmd" d.mmd &&
	test ! -e d.mmd.lock &&
	raymond diagram --html "$top/workflows/hello" --output=page.html &&
	head -1 page.html | grep -qx "<!DOCTYPE html>" &&
	grep -q "<title>hello - raymond diagram</title>" page.html &&
	grep -q "^<pre>flowchart TD$" page.html &&
	raymond diagram "$top/workflows/hello" --html >stdout.html &&
	cmp page.html stdout.html
'

test_expect_success 'a failed --output leaves the old file as it was' '
	mkdir sub &&
	err_is "cannot write --output '"'"'sub'"'"': it is a folder" \
		"--output names the file to write, in a folder that exists" -- \
		raymond diagram "$top/workflows/hello" --output sub &&
	err_is "cannot write --output '"'"'no/such/x.mmd'"'"': folder '"'"'$PWD/no/such'"'"' does not exist" \
		"--output names the file to write, in a folder that exists" -- \
		raymond diagram "$top/workflows/hello" --output no/such/x.mmd &&
	err_is "cannot write --output '"'"'/proc/raymond-test.mmd'"'"': cannot create '"'"'/proc/raymond-test.mmd.lock'"'"': No such file or directory" \
		"--output FILE is written as FILE.lock beside it, then renamed over it; omit --output to write to stdout" -- \
		raymond diagram "$top/workflows/hello" --output /proc/raymond-test.mmd &&
	echo keep >kept.mmd &&
	err_is "workflow '"'"'nope'"'"' does not exist" -- raymond diagram nope --output kept.mmd &&
	test "$(cat kept.mmd)" = keep
'

test_expect_success '--output through a symlink writes the file it points to and keeps the link' '
	echo old >target.mmd && ln -s target.mmd link.mmd &&
	raymond diagram "$top/workflows/hello" --output link.mmd >out 2>err &&
	test ! -s out && test ! -s err &&
	test -L link.mmd && test "$(readlink link.mmd)" = target.mmd &&
	diff -u "$top/tests/cli/diagram/hello.mmd" target.mmd &&
	test ! -e target.mmd.lock && test ! -e link.mmd.lock &&
	ln -s made.mmd dangling.mmd &&
	raymond diagram "$top/workflows/hello" --output dangling.mmd &&
	test -L dangling.mmd &&
	diff -u "$top/tests/cli/diagram/hello.mmd" made.mmd
'

test_expect_success '--output to a FIFO writes into it, as any tool would, and leaves it a FIFO' '
	# Lines of their own: "a && b &" would put both in the background.
	mkfifo pipe
	cat pipe >got &
	reader=$!
	rc=0
	raymond diagram "$top/workflows/hello" --output pipe >out 2>err || rc=$?
	# A raymond that replaced the FIFO never opened it: free the reader.
	if ! test -p pipe; then kill "$reader"; echo "the FIFO was replaced"; false; fi &&
	wait "$reader" &&
	test "$rc" = 0 && test ! -s out && test ! -s err &&
	diff -u "$top/tests/cli/diagram/hello.mmd" got
'

test_expect_success '--output to a device writes into it and leaves it a device' '
	# A device node of its own first (mknod needs root, and only root
	# could replace /dev/null), so that a raymond replacing devices
	# harms nothing but this folder before /dev/null is tried.
	if mknod null c 1 3 2>/dev/null; then
		raymond diagram "$top/workflows/hello" --output null &&
		test -c null &&
		raymond diagram "$top/workflows/hello" --output /dev/null >out 2>err &&
		test ! -s out && test ! -s err && test -c /dev/null
	elif [ "$(id -u)" != 0 ]; then
		raymond diagram "$top/workflows/hello" --output /dev/null >out 2>err &&
		test ! -s out && test ! -s err && test -c /dev/null
	fi &&
	ln -s /dev/full full &&
	err_is "cannot write --output '"'"'full'"'"': No space left on device" \
		"--output FILE writes into FILE; omit it to write to stdout" -- \
		raymond diagram "$top/workflows/hello" --output full &&
	test -L full && test "$(readlink full)" = /dev/full
'

test_expect_success 'what is not a workflow is refused, saying why' '
	hint="give a workflow folder (with 1_START or START, .md or .sh), a .zip archive of one, or a state file" &&
	echo text >notes.txt &&
	err_is "'"'"'notes.txt'"'"' is not a workflow: it is neither a folder, a .zip archive nor a state file (.md or .sh)" \
		"$hint" -- raymond diagram notes.txt &&
	mkdir empty &&
	err_is "'"'"'empty'"'"' is not a workflow: it holds no state file (.md or .sh)" "$hint" -- \
		raymond diagram empty &&
	err_is "no workflow given" "raymond diagram PATH: a workflow folder, a .zip archive of one, or a state file" -- \
		raymond diagram &&
	err_is "unexpected argument '"'"'b'"'"'" "see: raymond help diagram" -- raymond diagram a b &&
	err_is "option '"'"'--quiet'"'"' does not go with raymond diagram" "see: raymond help diagram" -- \
		raymond diagram wf --quiet &&
	err_is "--html and --output go with raymond diagram" "raymond diagram PATH --html --output FILE" -- \
		raymond wf --html
'

test_expect_success 'a folder with no entry state is drawn without one, with a warning' '
	echo "<result>x</result>" >B.md &&
	mkdir wf && mv B.md wf/ &&
	raymond diagram wf >out 2>err &&
	grep -q "^raymond: warning: .*; the drawing marks no entry state$" err &&
	! grep -q __start__ out &&
	grep -qxF "  s_B_md -->|\"result\"| __end__" out
'

test_expect_success 'raymond help diagram describes it' '
	raymond help diagram >out &&
	grep -q "^usage: raymond diagram PATH \[--html\] \[--output FILE\]$" out &&
	grep -q "^  --html " out && grep -q "^  --output FILE " out &&
	raymond diagram --help >out2 && cmp out out2 &&
	raymond help >all &&
	grep -q "^  diagram PATH " all
'

test_done
