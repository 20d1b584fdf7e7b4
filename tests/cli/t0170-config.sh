#!/bin/bash
# Config files: the project's in the .raymond folder where the runs go
# (as raymond.workspace.find_root finds it), and the user's under
# $XDG_CONFIG_HOME (else ~/.config).  The command line wins over the
# project's file, that over the user's, that over the defaults; values are
# checked as the options are, with the file and line in every message; a
# resumed run keeps its launch options.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE RAYMOND_CLAUDE

# cfg: the project's config file, from stdin.  ucfg: the user's, under
# ./xdg (each test that uses it points XDG_CONFIG_HOME there).
cfg() { mkdir -p .raymond && cat >.raymond/config.yaml; }
ucfg() { mkdir -p xdg/raymond && cat >xdg/raymond/config.yaml; }

# launch KEY VALUE: the run's saved launch options hold "KEY":VALUE.
launch() {
	state_json | grep -q "\"launch\":{[^}]*\"$1\":$2[,}]" ||
		{ echo "launch.$1 is not $2:"; state_json; return 1; }
}

# A state that prints nothing for 3 seconds, then completes.
slow() {
	state START.sh <<-\EOS
	sleep 3
	echo "<result>done</result>"
	EOS
}

test_expect_success 'timeout from the project config stops a quiet state; --timeout on the command line wins' '
	slow &&
	cfg <<-\EOF &&
	raymond:
	  timeout: 1
	EOF
	expect_status 1 raymond wf >out 2>err &&
	grep -q "script produced no output for 1 seconds" err &&
	raymond wf --timeout 60 >out 2>err &&
	grep -qx done out
'

test_expect_success 'budget from the config stops the run before a turn; --budget on the command line wins' '
	use_fake &&
	state START.md <<-\EOS &&
	Answer.
	MOCK: reply <result>answered</result>
	EOS
	cfg <<-\EOF &&
	# a budget too small for one turn
	raymond:
	  budget: 0.005
	EOF
	expect_status 3 raymond wf >out 2>err &&
	calls 0 &&
	grep -q "budget" err &&
	raymond wf --budget 5 >out 2>err &&
	grep -qx answered out &&
	calls 1
'

test_expect_success 'precedence: command line > project > user > default, in the run and in raymond config' '
	export XDG_CONFIG_HOME=$PWD/xdg &&
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	ucfg <<-\EOF &&
	raymond:
	  budget: 7
	  model: haiku
	  max_parallel: 4
	EOF
	cfg <<-\EOF &&
	raymond:
	  budget: 5
	  model: sonnet
	EOF
	raymond wf --model opus >out 2>err &&
	launch budget 5 && launch model "\"opus\"" && launch max_parallel 4 && launch timeout 600 &&
	raymond config --model opus >show 2>err &&
	test ! -s err &&
	grep -qx "budget = 5 (.raymond/config.yaml:2)" show &&
	grep -qx "model = opus (command line)" show &&
	grep -qx "max_parallel = 4 (xdg/raymond/config.yaml:4)" show &&
	grep -qx "timeout = 600 (default)" show &&
	grep -qx "# project config: .raymond/config.yaml (read)" show &&
	grep -qx "# user config: xdg/raymond/config.yaml (read)" show &&
	raymond config --json >json &&
	grep -q "\"budget\":{\"source\":\".raymond/config.yaml:2\",\"value\":5.0}" json &&
	grep -q "\"model\":{\"source\":\".raymond/config.yaml:3\",\"value\":\"sonnet\"}" json
'

test_expect_success 'the project config is found from a subdirectory, and its relative paths are taken from the project' '
	mkdir -p sub/deeper hk &&
	slow &&
	echo "return {}" >hk/h.lua &&
	cfg <<-\EOF &&
	raymond:
	  timeout: 1
	  hooks: [hk/h.lua]
	  allow_cd:
	    - hk
	EOF
	cd sub/deeper &&
	top=$(cd ../.. && pwd) &&
	raymond config --hooks ./mine.lua >show &&
	grep -qx "timeout = 1 ($top/.raymond/config.yaml:2)" show &&
	grep -qx "hooks = $top/hk/h.lua ($top/.raymond/config.yaml:3)" show &&
	grep -qx "hooks = ./mine.lua (command line)" show &&
	grep -qx "allow_cd = $top/hk ($top/.raymond/config.yaml:5)" show &&
	expect_status 1 raymond ../../wf >out 2>err &&
	grep -q "script produced no output for 1 seconds" err
'

test_expect_success 'the project config is the one where the runs go: none above a git project is read' '
	mkdir -p outer/.raymond outer/proj/sub &&
	printf "raymond:\n  budget: 1\n" >outer/.raymond/config.yaml &&
	(cd outer/proj && git init -q .) &&
	top=$PWD/outer/proj &&
	(cd outer/proj/sub && raymond config >../../../show) &&
	grep -qx "budget = 10 (default)" show &&
	grep -qx "# project config: $top/.raymond/config.yaml (none)" show &&
	(cd outer/proj/sub && raymond init-config >../../../out) &&
	grep -qx "Created $top/.raymond/config.yaml" out &&
	sed -i "s/^  # budget: .*/  budget: 2/" outer/proj/.raymond/config.yaml &&
	(cd outer/proj/sub && raymond config >../../../show) &&
	grep -qx "budget = 2 ($top/.raymond/config.yaml:8)" show &&
	(cd outer && raymond config >../show) &&
	grep -qx "budget = 1 (.raymond/config.yaml:2)" show
'

test_expect_success 'the user config: $XDG_CONFIG_HOME/raymond, else ~/.config/raymond' '
	mkdir -p home/.config/raymond &&
	printf "raymond:\n  max_agents: 9\n" >home/.config/raymond/config.yaml &&
	printf "raymond:\n  max_agents: 11\n" | ucfg &&
	XDG_CONFIG_HOME=$PWD/xdg HOME=$PWD/home raymond config >show &&
	grep -qx "max_agents = 11 (xdg/raymond/config.yaml:2)" show &&
	(unset XDG_CONFIG_HOME && HOME=$PWD/home raymond config >show2) &&
	grep -qx "max_agents = 9 (home/.config/raymond/config.yaml:2)" show2
'

test_expect_success 'an unknown key warns with its line and the key it may be a typo of; the run goes on' '
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	cfg <<-\EOF &&
	raymond:
	  budget: 5
	  max_paralel: 3
	  max-agents: 10
	  colour: red
	  verbose: true
	EOF
	raymond wf >out 2>err &&
	grep -qx ok out &&
	grep -qx "raymond: warning: .raymond/config.yaml:3: unknown key '\''max_paralel'\'' is ignored; did you mean '\''max_parallel'\''?" err &&
	grep -qx "raymond: warning: .raymond/config.yaml:4: unknown key '\''max-agents'\'' is ignored; did you mean '\''max_agents'\''?" err &&
	grep -qx "raymond: warning: .raymond/config.yaml:5: unknown key '\''colour'\'' is ignored" err &&
	grep -qx "raymond: warning: .raymond/config.yaml:6: verbose is not supported by raymond yet and is ignored (raymond shows progress unless quiet is set)" err &&
	launch budget 5 && launch max_parallel 32
'

# bad VALUE LINE MESSAGE HINT: budget: 1 on line 2, then KEY: VALUE on
# line 3, is refused with MESSAGE and HINT, and nothing runs.
bad() {
	printf "raymond:\n  budget: 1\n  %s\n" "$1" | cfg &&
	expect_status 1 raymond wf >out 2>err &&
	printf "raymond: error: .raymond/config.yaml:3: %s\nhint: %s\n" "$2" "$3" >want &&
	diff want err &&
	test ! -s out && test ! -e ran &&
	expect_status 1 raymond config >out 2>err2 && diff want err2
}

test_expect_success 'a bad value is an error naming the file and line, checked as the option is; nothing runs' '
	state START.sh <<-\EOS &&
	touch ran
	echo "<result>ok</result>"
	EOS
	fix="fix the file, or run with --no-config; see raymond help config" &&
	bad "timeout: -1" "timeout needs a number from 0 to 1e+07, got '\''-1'\''" "for example: timeout: 300" &&
	bad "max_parallel: 2.5" "max_parallel needs a whole number, got '\''2.5'\''" "$fix" &&
	bad "effort: huge" "effort must be low, medium, high, xhigh or max, not '\''huge'\''" "$fix" &&
	bad "no_wait: maybe" "no_wait must be true or false, not '\''maybe'\''" "for example: no_wait: true" &&
	bad "model: [a, b]" "model must be a single value, not a list" "for example: model: sonnet" &&
	bad "hooks: {a: b}" "hooks must be a list of paths, not a mapping" "for example: hooks: [path, path]" &&
	bad "allow_cd: [nowhere]" "allow_cd: '\''$PWD/nowhere'\'' is not a directory" "relative paths are taken from $PWD" &&
	raymond wf --no-config >out 2>err && test -e ran
'

test_expect_success 'malformed YAML, or raymond: not a mapping, is an error naming the line' '
	state START.sh <<-\EOS &&
	touch ran
	echo "<result>ok</result>"
	EOS
	printf "raymond:\n  budget: 5\n model: x\n" | cfg &&
	expect_status 1 raymond wf >out 2>err &&
	grep -q "^raymond: error: .raymond/config.yaml:3: " err &&
	grep -qx "hint: fix the file, or run with --no-config; see raymond help config" err &&
	printf "# settings\nraymond: 5\n" | cfg &&
	expect_status 1 raymond wf >out 2>err &&
	grep -qx "raymond: error: .raymond/config.yaml:2: raymond must be a mapping of key: value, not a single value" err &&
	printf "raymond:\n  - budget: 5\n" | cfg &&
	expect_status 1 raymond config >out 2>err &&
	grep -qx "raymond: error: .raymond/config.yaml:1: raymond must be a mapping of key: value, not a list" err &&
	printf "raymond:\n  budget: 5\n  budget: 6\n" | cfg &&
	expect_status 1 raymond config >out 2>err &&
	grep -qx "raymond: error: .raymond/config.yaml:3: duplicate key '\''budget'\'' (first on line 2)" err &&
	test ! -e ran
'

test_expect_success 'a FIFO or a folder in place of the config is refused at once; a link to a file is read' '
	mkdir -p .raymond &&
	mkfifo .raymond/config.yaml &&
	expect_status 1 raymond config >out 2>err &&
	grep -q "not a regular file (a FIFO)" err &&
	rm .raymond/config.yaml && mkdir .raymond/config.yaml &&
	expect_status 1 raymond config >out 2>err &&
	grep -q "not a regular file (a folder)" err &&
	rmdir .raymond/config.yaml &&
	printf "raymond:\n  budget: 3\n" >real.yaml &&
	ln -s ../real.yaml .raymond/config.yaml &&
	raymond config >show &&
	grep -qx "budget = 3 (.raymond/config.yaml:2)" show
'

test_expect_success 'init-config writes every setting, which loads clean, and refuses a second time' '
	mkdir -p sub &&
	raymond init-config >out 2>err &&
	grep -qx "Created .raymond/config.yaml" out &&
	for k in budget timeout model effort dangerously_skip_permissions no_wait no_debug quiet \
	    max_parallel max_agents max_repeats claude allow_cd hooks no_default_hooks; do
		grep -q "^  # $k: " .raymond/config.yaml || { echo "no $k"; return 1; }
	done &&
	raymond config >show 2>err &&
	test ! -s err &&
	grep -qx "budget = 10 (default)" show &&
	cp .raymond/config.yaml before &&
	expect_status 1 raymond init-config >out 2>err &&
	grep -qx "raymond: error: a config file already exists: .raymond/config.yaml" err &&
	(cd sub && expect_status 1 raymond --init-config >out 2>err) &&
	cmp before .raymond/config.yaml &&
	sed "s/^  # \([a-z_]*: [^ ]*\).*/  \1/" .raymond/config.yaml >uncommented &&
	mv uncommented .raymond/config.yaml &&
	raymond config >show 2>err &&
	test ! -s err &&
	grep -qx "budget = 10 (.raymond/config.yaml:8)" show &&
	grep -qx "effort = high (.raymond/config.yaml:14)" show
'

test_expect_success 'init-config --user writes the user file; the old --init-config form works' '
	export XDG_CONFIG_HOME=$PWD/xdg &&
	mkdir a &&
	(cd a && raymond --init-config >out) && grep -qx "Created .raymond/config.yaml" a/out &&
	raymond init-config --user >out &&
	grep -qx "Created xdg/raymond/config.yaml" out &&
	test -s xdg/raymond/config.yaml &&
	expect_status 1 raymond init-config --user 2>err &&
	grep -qx "raymond: error: a config file already exists: xdg/raymond/config.yaml" err &&
	expect_status 1 raymond --user --list 2>err &&
	grep -qx "raymond: error: --user goes with --init-config" err
'

test_expect_success 'a resumed run keeps its launch options when the config was edited since; quiet is read again' '
	state START.sh <<-\EOS &&
	test -e go || exit 1
	echo "<result>ok</result>"
	EOS
	printf "raymond:\n  budget: 5\n  max_agents: 7\n" | cfg &&
	expect_status 1 raymond wf >out 2>err &&
	launch budget 5 && launch max_agents 7 &&
	printf "raymond:\n  budget: 1\n  max_agents: 100\n  timeout: 5\n  quiet: true\n" | cfg &&
	touch go &&
	raymond resume "$(run_id)" >out 2>err &&
	grep -qx ok out &&
	test ! -s err &&
	launch budget 5 && launch max_agents 7 && launch timeout 600 &&
	raymond resume "$(run_id)" 2>err || grep -q "already completed" err
'

test_expect_success 'booleans: a file turns one on, the project file can turn off the user one, --no-config ignores both' '
	export XDG_CONFIG_HOME=$PWD/xdg &&
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	printf "raymond:\n  no_wait: true\n  dangerously_skip_permissions: yes\n  quiet: on\n" | ucfg &&
	printf "raymond:\n  no_wait: false\n" | cfg &&
	raymond config >show &&
	grep -qx "no_wait = false (.raymond/config.yaml:2)" show &&
	grep -qx "dangerously_skip_permissions = true (xdg/raymond/config.yaml:3)" show &&
	raymond wf >out 2>err &&
	test ! -s err &&
	launch skip_permissions true &&
	! state_json | grep -q "\"no_wait\"" &&
	rm -rf .raymond/state &&
	raymond wf --no-config >out 2>err &&
	grep -q "^raymond: run " err &&
	! state_json | grep -q "\"skip_permissions\"" &&
	raymond config --no-config >show &&
	grep -qx "# user config: xdg/raymond/config.yaml (not read (--no-config))" show
'

test_expect_success 'dangerously_skip_permissions from a config file is said at the start of the run' '
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	printf "raymond:\n  dangerously_skip_permissions: true\n" | cfg &&
	raymond wf >out 2>err &&
	grep -qx "raymond: dangerously_skip_permissions is on (.raymond/config.yaml:2)" err
'

test_done
