#!/bin/bash
# Launchers a user defines in the config (docs/cluster.md), and the
# errors around choosing one: an unknown launcher given to --launcher, in
# a frontmatter, in a script's header or in <fork launcher=>, and a
# template with an unknown placeholder, each a clear error naming where
# and the launcher, the state left as it was.
. "$(dirname "$0")/lib.sh"

test_expect_success 'a user template: its placeholders filled in, {command} one quoted string' '
	mkdir -p .raymond &&
	cat >.raymond/config.yaml <<-\EOS &&
	raymond:
	  launchers:
	    mine:
	      run: [./runner, "{job}", "cpus={cpus}", "ns={namespace}", "{resources}", "{command}", sh, -s]
	      cpus: 3
	      args: [--fast, --quiet]
	EOS
	cat >runner <<-\EOS &&
	#!/bin/sh
	for a in "$@"; do printf "%s\n" "$a"; done >"$OUT/argv"
	exec sh -s
	EOS
	chmod +x runner &&
	export OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "<result>templated</result>"
	EOS
	raymond wf --launcher mine --quiet >out &&
	test "$(cat out)" = templated &&
	job=$(sed -n 1p argv) &&
	expr "$job" : "ray-main-[0-9a-f]\{8\}$" >/dev/null &&
	printf "%s\n" "$job" cpus=3 --fast --quiet "'\''bash'\'' '\''$PWD/wf/START.sh'\''" sh -s >want &&
	diff want argv &&
	raymond config >shown &&
	grep -qx "launchers.mine = run: template (.raymond/config.yaml:3)" shown
'

test_expect_success 'an unknown --launcher is refused before the run starts' '
	state START.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond wf --launcher slrum 2>err &&
	grep -q "launcher slrum: no such launcher (built in: local, slurm, ssh, kubernetes; configured: none" err &&
	! test -d .raymond/state || test -z "$(ls .raymond/state)"
'

test_expect_success 'an unknown launcher: in a config file is an error naming its line' '
	mkdir -p .raymond &&
	printf "raymond:\n  budget: 2\n  launcher: gpu\n" >.raymond/config.yaml &&
	state START.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond wf 2>err &&
	grep -q "^raymond: error: .raymond/config.yaml:3: launcher gpu: no such launcher" err &&
	! test -d .raymond/state &&
	raymond wf --launcher local --quiet >out &&
	test "$(cat out)" = x
'

test_expect_success 'an unknown launcher in a frontmatter fails the state naming the file and the launcher' '
	use_fake &&
	mkdir -p wf &&
	printf -- "---\nlauncher: {name: gpu, cpus: 4}\n---\nMOCK: reply <result>x</result>" >wf/START.md &&
	expect_status 1 raymond wf --no-lint 2>err &&
	grep -q "error: wf/START.md (agent main): launcher gpu: no such launcher" err &&
	grep -q "raymond --resume" err &&
	calls 0 &&
	mkdir -p .raymond &&
	printf "raymond:\n  launchers:\n    gpu:\n      run: [sh, -s]\n" >.raymond/config.yaml &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = x &&
	calls 1
'

test_expect_success 'an unknown launcher in a script header fails the state; the script does not run' '
	export OUT=$PWD &&
	state START.sh <<-\EOS &&
	#!/bin/bash
	# ---
	# launcher: nowhere
	# ---
	touch "$OUT/ran"
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond wf --no-lint 2>err &&
	grep -q "error: wf/START.sh (agent main): launcher nowhere: no such launcher" err &&
	! test -e ran &&
	state_json | grep -q "\"state\":\"START.sh\""
'

test_expect_success '<fork launcher=> must name a launcher there is; the parent stays where it was' '
	export OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" launcher=\"mystery\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	touch "$OUT/worker"
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	expect_status 1 raymond wf --no-lint 2>err &&
	grep -q "<fork launcher=\"mystery\">: no such launcher (built in: local, slurm, ssh, kubernetes" err &&
	! test -e worker &&
	state_json | grep -q "\"state\":\"START.sh\""
'

test_expect_success '<fork launcher=local> gives the worker its launcher, kept in the state file' '
	export OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" launcher=\"local\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	touch "$OUT/worker"
	while ! test -e "$OUT/go"; do sleep 0.05; done
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	true
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$! &&
	wait_for_file worker &&
	wait_until 60 grep -q "\"launcher\":\"local\"" "$(state_file)" &&
	touch go &&
	wait $pid &&
	test "$(cat out)" = done
'

test_expect_success 'lint reports each unknown launcher at its line, and knows the configured ones' '
	mkdir -p .raymond wf &&
	printf "raymond:\n  launchers:\n    gpu:\n      base: slurm\n      partition: gpu\n" >.raymond/config.yaml &&
	printf -- "---\nmodel: haiku\nlauncher: {name: gpu, cpus: 2}\n---\nMOCK: reply <goto>B</goto>\n" >wf/START.md &&
	state B.sh <<-\EOS &&
	#!/bin/bash
	# ---
	# launcher: gpus
	# ---
	echo "<fork next=\"C\" launcher=\"ssh\">C</fork>"
	echo "<fork next=\"C\" launcher=\"mystery\">C</fork>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond lint wf >out &&
	grep -qx "wf/B.sh:3: error: launcher gpus: no such launcher (built in: local, slurm, ssh, kubernetes; configured: gpu) \[unknown-launcher\]" out &&
	grep -q "^wf/B.sh:6: error: launcher mystery: " out &&
	test "$(grep -c unknown-launcher out)" = 2 &&
	expect_status 1 raymond wf 2>err &&
	grep -q "the run was not started" err
'

test_expect_success 'a template with an unknown placeholder is an error naming FILE:LINE; nothing runs' '
	mkdir -p .raymond &&
	cat >.raymond/config.yaml <<-\EOS &&
	raymond:
	  launchers:
	    batch:
	      submit: [qsub, -N, "{job}", "{scrpit}"]
	      status: [qstat, "{job}"]
	      cancel: [qdel, "{job}"]
	EOS
	state START.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond wf 2>err &&
	grep -q "^raymond: error: .raymond/config.yaml:4: launchers: batch: submit: unknown placeholder {scrpit} in '\''{scrpit}'\''" err &&
	! test -d .raymond/state
'

test_done
