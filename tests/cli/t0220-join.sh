#!/bin/bash
# Joins: <fork join="SUMMARY" wait="..."> starts a summary agent with the
# workers' results once the join's policy is decided (docs/protocol.md,
# "Joins").  Workers' <result> payloads reach it in fork order as JSON, a
# failing worker is data rather than the end of the run, and first /
# quorum joins stop the workers they no longer wait for.
. "$(dirname "$0")/lib.sh"

# A parent forking workers a, b and c with join= and wait=$1 (none: the
# default); W.sh ends with "got ITEM", fails for item=fail, sleeps for
# item=slow (its pid in slow.pid), and for item=late waits until slow
# runs; SUM.sh keeps what it was given.
fan_out() {
	w=${1:+ wait=\"$1\"}
	cat >wf/START.sh <<-EOS
	echo '<fork next="DONE" join="SUM"$w item="$2">W</fork>'
	echo '<fork next="DONE" join="SUM"$w item="$3">W</fork>'
	echo '<fork next="DONE" join="SUM"$w item="$4">W</fork>'
	EOS
}

setup() {
	mkdir -p wf &&
	state W.sh <<-\EOS &&
	case $item in
	fail) echo "no luck with $item" >&2; exit 3 ;;
	slow) echo $$ >"$JOIN_DIR/slow.pid.tmp"; mv "$JOIN_DIR/slow.pid.tmp" "$JOIN_DIR/slow.pid"; sleep 60 ;;
	late) for _ in $(seq 3000); do test -e "$JOIN_DIR/slow.pid" && break; sleep 0.02; done ;;
	esac
	echo "<result>got $item</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>parent done</result>"
	EOS
	state SUM.sh <<-\EOS
	echo "$RAYMOND_AGENT_ID $PWD" >>"$JOIN_DIR/sum.log"
	cat "$RAYMOND_RESULTS_FILE" >"$JOIN_DIR/results.json"
	printf %s "$RAYMOND_INPUT" >"$JOIN_DIR/input.json"
	echo "<result>summarised</result>"
	EOS
}


test_expect_success 'all: the summary gets every result in fork order, a failure as data; without join= a failure still fails the run' '
	export JOIN_DIR=$PWD &&
	setup && fan_out "" a fail c &&
	raymond wf >out 2>err &&
	grep -x "parent done" out &&
	test "$(wc -l <sum.log)" -eq 1 &&
	grep -q "^main_sum4 " sum.log &&
	a="{\"agent\":\"main_w1\",\"result\":\"got a\",\"state\":\"W.sh\",\"status\":\"ok\"}" &&
	b="{\"agent\":\"main_w2\",\"detail\":\"no luck with fail\",\"error\":\"script exited with status 3\",\"state\":\"W.sh\",\"status\":\"failed\"}" &&
	c="{\"agent\":\"main_w3\",\"result\":\"got c\",\"state\":\"W.sh\",\"status\":\"ok\"}" &&
	test "$(cat results.json)" = "[$a,$b,$c]" &&
	cmp results.json input.json &&
	grep -q "gathered as a failure by its join" err &&
	grep -q "join of 3 workers (wait all): 2 ok, 1 failed, 0 cancelled; main_sum4 starts at SUM.sh" err &&
	grep -q "\"status\":\"completed\"" "$(state_file)" &&
	! grep -q "\"joins\"" "$(state_file)" &&
	# Without join= a failing worker still fails the run, as before.
	rm -rf .raymond sum.log &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" item=\"fail\">W</fork>"
	EOS
	expect_status 1 raymond wf >out 2>err &&
	grep -q "script exited with status 3" err &&
	! test -e sum.log
'

test_expect_success 'first: the first success fires, a slow worker is stopped and recorded as cancelled' '
	export JOIN_DIR=$PWD &&
	setup && fan_out first slow fail late &&
	start=$(now_ms) &&
	raymond wf >out 2>err &&
	test $(( $(now_ms) - start )) -lt 30000 &&
	grep -q "\"agent\":\"main_w1\",\"state\":\"W.sh\",\"status\":\"cancelled\"" results.json &&
	grep -q "\"agent\":\"main_w3\",\"result\":\"got late\"" results.json &&
	grep -q "main_w1\] W.sh: cancelled" err &&
	wait_for_exit "$(cat slow.pid)"
'

test_expect_success 'quorum: wait="2" fires at two successes' '
	export JOIN_DIR=$PWD &&
	setup && fan_out 2 a late slow &&
	raymond wf >out 2>err &&
	grep -q "2 ok, 0 failed, 1 cancelled" err &&
	grep -q "\"status\":\"cancelled\"" results.json &&
	wait_for_exit "$(cat slow.pid)"
'

test_expect_success 'quorum: when it can no longer be reached the join fires with what there is' '
	export JOIN_DIR=$PWD &&
	setup && fan_out 2 fail fail slow &&
	raymond wf >out 2>err &&
	grep -q "0 ok, 2 failed, 1 cancelled" err &&
	test "$(grep -o "\"status\":\"failed\"" results.json | wc -l)" -eq 2
'

test_expect_success 'the summary starts in the parent'"'"'s directory at the fork, not a worker'"'"'s' '
	export JOIN_DIR=$PWD &&
	setup && mkdir -p sub other &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"sub\">FORK</reset>"
	EOS
	state FORK.sh <<-\EOS &&
	echo "<fork next=\"DONE\" join=\"SUM\" cd=\"../other\" item=\"a\">W</fork>"
	EOS
	raymond wf >out 2>err &&
	test "$(cat sum.log)" = "main_sum2 $PWD/sub"
'

test_expect_success 'a markdown summary sees {{results}} and {{input}}' '
	use_fake &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" join=\"SUM.md\" item=\"x\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "<result>got $item</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>parent done</result>"
	EOS
	state SUM.md <<-\EOS &&
	Results: {{results}}
	Input: {{input}}
	MOCK: reply <result>ok</result>
	EOS
	raymond wf >out 2>err &&
	calls 1 &&
	grep -F "Results: [{\\\"agent\\\":\\\"main_w1\\\",\\\"result\\\":\\\"got x\\\"" fake/log.jsonl &&
	grep -F "Input: [{\\\"agent\\\":\\\"main_w1\\\"" fake/log.jsonl
'

test_expect_success 'first: a markdown worker'"'"'s Claude turn is stopped too, its turn closed' '
	use_fake &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" join=\"SUM\" wait=\"first\">SLOW.md</fork>"
	echo "<fork next=\"DONE\" join=\"SUM\" wait=\"first\">FAST.sh</fork>"
	EOS
	state SLOW.md <<-\EOS &&
	Think for a long time.
	MOCK: hang 60
	EOS
	state FAST.sh <<-\EOS &&
	for _ in $(seq 3000); do grep -qs hang fake/log.jsonl && break; sleep 0.02; done
	echo "<result>fast</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>parent done</result>"
	EOS
	state SUM.sh <<-\EOS &&
	cp "$RAYMOND_RESULTS_FILE" results.json
	echo "<result>s</result>"
	EOS
	start=$(now_ms) &&
	raymond wf >out 2>err &&
	test $(( $(now_ms) - start )) -lt 30000 &&
	grep -q "\"agent\":\"main_slow1\",\"state\":\"SLOW.md\",\"status\":\"cancelled\"" results.json &&
	grep -q "\"open_turns\":{}" "$(state_file)"
'

test_expect_success 'several joins in one run, each with its own summary' '
	export JOIN_DIR=$PWD &&
	setup &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"AGAIN\" join=\"SUM\" item=\"one\">W</fork>"
	EOS
	state AGAIN.sh <<-\EOS &&
	echo "<fork next=\"DONE\" join=\"SUM\" item=\"two\">W</fork>"
	EOS
	raymond wf >out 2>err &&
	test "$(wc -l <sum.log)" -eq 2 &&
	test "$(cut -d" " -f1 sum.log | grep "^main_sum[234]$" | sort -u | wc -l)" -eq 2
'

test_done
