#!/bin/bash
# A YAML workflow's states name their launcher with launcher: (docs/yaml.md,
# docs/cluster.md): a script state's runs through it, a markdown state's
# too; a bad value is an error naming the file's line, and lint names an
# unknown launcher at the state's line.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/launch-lib.sh"

test_expect_success 'a YAML script state with launcher: runs through it; the next state runs here' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD &&
	cat >flow.yaml <<-\EOS &&
	states:
	  START:
	    sh: |
	      echo "$RAYMOND_JOB" >"$OUT/remote"
	      echo "<goto>HERE</goto>"
	    launcher: box
	  HERE:
	    sh: |
	      echo "${RAYMOND_JOB:-none}" >"$OUT/here"
	      echo "<result>done</result>"
	EOS
	raymond flow.yaml --quiet >out &&
	test "$(cat out)" = done &&
	grep -q "^ray-main-" remote &&
	test "$(cat here)" = none &&
	test "$(grep -c -- --end-- ssh.log)" = 1
'

test_expect_success 'a YAML markdown state with launcher: {name: box} runs the CLI through it' '
	box_config && use_fake &&
	export FAKE_SSH_LOG=$PWD/ssh.log &&
	cat >flow.yaml <<-\EOS &&
	states:
	  START:
	    prompt: "MOCK: reply <result>yaml far</result>"
	    launcher: {name: box}
	EOS
	raymond flow.yaml --quiet >out &&
	test "$(cat out)" = "yaml far" &&
	calls 1 &&
	test "$(grep -c -- --end-- ssh.log)" = 1
'

test_expect_success 'a bad launcher: value is an error naming the line; an unknown one, lint names its state' '
	cat >flow.yaml <<-\EOS &&
	states:
	  START:
	    sh: echo "<result>x</result>"
	    launcher: {name: box, cpu: 2}
	EOS
	expect_status 1 raymond flow.yaml 2>err &&
	grep -q "flow.yaml:4: state START: launcher has unknown key '\''cpu'\''" err &&
	cat >flow.yaml <<-\EOS &&
	states:
	  START:
	    sh: echo "<result>x</result>"
	    launcher: box
	EOS
	expect_status 1 raymond lint flow.yaml >out &&
	grep -q "^flow.yaml:2: error: launcher box: no such launcher" out &&
	expect_status 1 raymond flow.yaml --no-lint 2>err &&
	grep -q "flow.yaml:2: launcher box: no such launcher" err
'

test_done
