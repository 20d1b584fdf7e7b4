#!/bin/bash
# make install and make uninstall, from the tree already built: the binary
# works with no source tree and no installed share files, wherever the
# staged tree is moved; the man page and the completions come from the
# command table of the binary installed, so every command shows in them;
# uninstall removes every file install made.
. "$(dirname "$0")/lib.sh"

BUILD=$(dirname "$RAYMOND")
STAGE=$TEST_ROOT/stage
unset RAYMOND_LUA_DIR

# make TARGET DESTDIR=$2 PREFIX=/usr from the source tree, with the binary
# under test as it is: -o keeps make from building it again (with other
# flags than a sanitizer build's, say).  The man page and completions are
# written afresh by that binary.
make_target() {
	(unset MAKEFLAGS MFLAGS MAKELEVEL
	 make -C "$TESTS_TOP" --no-print-directory -o "$BUILD/raymond" -o "$BUILD/raymond-launch-follow" \
		BUILD="$BUILD" DESTDIR="$2" PREFIX=/usr "$1") \
		>"make-$1.out" 2>&1 || { cat "make-$1.out"; return 1; }
}
rm -f "$BUILD"/gen/raymond.man "$BUILD"/gen/raymond.bash "$BUILD"/gen/raymond.zsh

# The commands `raymond help` lists, one a line.
commands() {
	"$RAYMOND" help | sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p'
}

# The options `raymond help CMD` lists, one a line.
options_of() {
	"$RAYMOND" help "$1" | sed -n 's/^  \(--[a-z][a-z-]*\).*/\1/p'
}

# A workflow and a run of it in a project outside the source tree: the
# completions list its id.
PROJECT=$TEST_ROOT/project
mkdir -p "$PROJECT/.git" "$PROJECT/deep/er"
cp -R "$TESTS_TOP/workflows/hello" "$PROJECT/hello"

test_expect_success 'make install puts every file under DESTDIR/PREFIX with its mode' '
	make_target install "$STAGE" &&
	test -x "$STAGE/usr/bin/raymond" &&
	stat -c %a "$STAGE/usr/bin/raymond" | grep -qx 755 &&
	stat -c %a "$STAGE/usr/bin/raymond-launch-follow" | grep -qx 755 &&
	for f in share/man/man1/raymond.1 share/bash-completion/completions/raymond \
		 share/zsh/site-functions/_raymond share/doc/raymond/cli.md \
		 share/doc/raymond/README.md share/raymond/lua/raymond/engine.lua \
		 share/raymond/lua/raymond/commands/run.lua; do
		stat -c %a "$STAGE/usr/$f" | grep -qx 644 || { echo "missing or not 644: $f"; exit 1; }
	done &&
	for f in "$TESTS_TOP"/hooks/*.lua; do
		cmp "$f" "$STAGE/usr/share/raymond/hooks/${f##*/}" || exit 1
	done &&
	! grep -rl "$TESTS_TOP" "$STAGE"
'

test_expect_success 'the installed binary, moved elsewhere, runs a workflow reading nothing from the source tree' '
	case $PWD/ in "$TESTS_TOP"/*)
		echo "TMPDIR is inside the source tree: this test cannot tell its reads apart"; exit 1 ;;
	esac &&
	mkdir moved &&
	cp -R "$STAGE/usr" moved/ &&
	rm -rf moved/usr/share/raymond &&
	cd "$PROJECT" &&
	if command -v strace >/dev/null; then
		# LeakSanitizer cannot run under ptrace; a sanitizer build leaves it out here.
		ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" strace -f -qq -e trace=%file,%process -o "$OLDPWD/trace" \
			"$OLDPWD/moved/usr/bin/raymond" hello --input moon >"$OLDPWD/out" 2>"$OLDPWD/err" &&
		! grep -F "$TESTS_TOP" "$OLDPWD/trace" &&
		grep -q "hello/START.sh" "$OLDPWD/trace"
	else
		"$OLDPWD/moved/usr/bin/raymond" hello --input moon >"$OLDPWD/out" 2>"$OLDPWD/err"
	fi &&
	cd "$OLDPWD" &&
	printf "hello, moon\n3...\n2...\n1...\nliftoff\n" >want &&
	diff -u want out &&
	! grep -aF "$TESTS_TOP" moved/usr/bin/raymond
'

test_expect_success 'the man page renders and has every command and option of the binary' '
	command -v man >/dev/null || sh "$TESTS_TOP/tools/apt-install.sh" test man-db groff-base &&
	MANWIDTH=80 MANPAGER=cat man -l "$STAGE/usr/share/man/man1/raymond.1" >page &&
	groff -man -ww -z -Tutf8 "$STAGE/usr/share/man/man1/raymond.1" 2>groff.err &&
	! test -s groff.err || { cat groff.err; exit 1; }
	grep -q "^NAME" page && grep -q "raymond - run workflows" page &&
	sed -n "/^COMMANDS/,/^OPTIONS/p" page >cmds &&
	for c in $(commands); do
		grep -Eq "^       $c( |\$)" cmds || { echo "no command $c in the man page"; exit 1; }
		for o in $(options_of "$c"); do
			grep -q -- "$o" page || { echo "no option $o in the man page"; exit 1; }
		done
	done &&
	test "$(commands | wc -l)" -ge 6 &&
	if command -v mandoc >/dev/null; then
		mandoc -Tlint -W warning "$STAGE/usr/share/man/man1/raymond.1"
	fi
'

# man_options FILE: the options named in FILE (roff source), one a line.
man_options() {
	sed 's/\\-/-/g' "$1" | grep -o -- "--[a-z][a-z-]*"
}

test_expect_success 'the man page says every option of the old form that chooses a command, as the table has them' '
	page="$STAGE/usr/share/man/man1/raymond.1" &&
	sed -n "/^A first argument naming a command/,/choose the command/p" "$page" >para &&
	sed -n "/^\.SS The old form/,/^\.SH/{/^\\\\fB/p}" "$page" >old &&
	man_options para >said && man_options old >table &&
	cat said table &&
	test "$(wc -l <table)" -ge 6 && grep -qx -- --init-config table &&
	diff -u table said
'

# complete WORD...: what the installed bash completion offers for the
# command line WORD... (the last word is the one being completed), run in
# the current folder, one a line.
complete_bash() {
	bash -c 'source "$0"; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _raymond
		printf "%s\n" "${COMPREPLY[@]}"' "$STAGE/usr/share/bash-completion/completions/raymond" "$@"
}

test_expect_success 'the bash completion loads and completes commands, options, workflows and run ids' '
	bash -c "source \"\$0\"; complete -p raymond" \
		"$STAGE/usr/share/bash-completion/completions/raymond" >spec &&
	grep -qx "complete -F _raymond raymond" spec &&
	id=$(cd "$PROJECT" && ls .raymond/state | sed -n "s/\.json\$//p") &&
	test -n "$id" &&
	here=$PWD &&
	cd "$PROJECT/deep/er" &&
	complete_bash raymond "" >"$here/first" &&
	complete_bash raymond resume "" >"$here/resume" &&
	complete_bash raymond --status = "" >"$here/status" &&
	complete_bash raymond run --effort "" >"$here/effort" &&
	complete_bash raymond status "$id" --j >"$here/json" &&
	cd "$PROJECT" &&
	complete_bash raymond run h >"$here/workflow" &&
	cd "$here" &&
	for c in $(commands); do grep -qx "$c" first || { echo "no command $c"; exit 1; }; done &&
	grep -qx "$id" resume && test "$(wc -l <resume)" -eq 1 &&
	grep -qx "$id" status &&
	printf "low\nmedium\nhigh\nxhigh\nmax\n" >want && diff -u want effort &&
	grep -qx -- --json json &&
	grep -qx hello workflow &&
	complete_bash raymond run -- >opts &&
	for o in $(options_of run); do grep -qx -- "$o" opts || { echo "no option $o"; exit 1; }; done
'

test_expect_success 'the zsh completion parses and completes commands and run ids' '
	command -v zsh >/dev/null || sh "$TESTS_TOP/tools/apt-install.sh" test zsh ||
		{ echo "zsh cannot be installed: the completion file was only checked present"; exit 0; }
	zsh -n "$STAGE/usr/share/zsh/site-functions/_raymond" &&
	head -1 "$STAGE/usr/share/zsh/site-functions/_raymond" | grep -qx "#compdef raymond" &&
	cat >drive.zsh <<-\EOS &&
	# Stand-ins for the completion system: print what would be offered.
	compdef() { :; }
	compadd() { [[ $1 == -a ]] && { print -rl -- ${(P)2}; return }; [[ $1 == -- ]] && shift; print -rl -- "$@"; }
	_describe() { print -rl -- ${${(P)4}%%:*}; }
	_files() { print -r -- "files $*"; }
	source $1
	shift
	words=( "$@" ) CURRENT=$#
	_raymond
	EOS
	id=$(cd "$PROJECT" && ls .raymond/state | sed -n "s/\.json\$//p") &&
	test -n "$id" &&
	(cd "$PROJECT/deep" && zsh -f "$OLDPWD/drive.zsh" "$STAGE/usr/share/zsh/site-functions/_raymond" \
		raymond resume "") >resume &&
	zsh -f drive.zsh "$STAGE/usr/share/zsh/site-functions/_raymond" raymond "" >first &&
	grep -qx "$id" resume && test "$(wc -l <resume)" -eq 1 &&
	for c in $(commands); do grep -qx "$c" first || { echo "no command $c"; exit 1; }; done &&
	grep -q "^files " first
'

test_expect_success 'a command added to the table shows in the man page and both completions' '
	mkdir -p gen &&
	cp -R "$TESTS_TOP/tools/gen/raymond" gen/ &&
	mkdir -p gen/raymond/commands &&
	cat >gen/raymond/commands.lua <<-\EOS &&
	-- The compiled-in table, plus one command.
	local source = require("raymond").embedded("raymond.commands")["raymond.commands"]
	local M = load(source, "=commands")()
	local extra = { name = "frobnicate", summary = "frobnicate a workflow" }
	M.list[#M.list + 1] = extra
	M.by_name.frobnicate = extra
	return M
	EOS
	cat >gen/raymond/commands/frobnicate.lua <<-\EOS &&
	return {
	  usage = { "raymond frobnicate WORKFLOW [--json]" },
	  args = { { key = "workflow", name = "WORKFLOW" } },
	  flags = { { "frobnicate options", "json" } },
	  help = "Frobnicates WORKFLOW.",
	  main = function() return 0 end,
	}
	EOS
	for kind in man bash zsh; do
		RAYMOND_LUA_DIR=$PWD/gen "$RAYMOND" $kind >out.$kind || exit 1
	done &&
	grep -q "^\\\\fBraymond\\\\fR \\\\fBfrobnicate\\\\fR \\\\fIWORKFLOW\\\\fR" out.man &&
	grep -q "^Frobnicates WORKFLOW" out.man &&
	grep -q "^_raymond_commands=.* frobnicate'"'"'\$" out.bash &&
	grep -qx "	frobnicate) REPLY='"'"'--json --help'"'"' ;;" out.bash &&
	grep -qx "	frobnicate) REPLY='"'"'workflow'"'"' ;;" out.bash &&
	grep -qx "		'"'"'frobnicate:frobnicate a workflow'"'"'" out.zsh
'

test_expect_success 'make uninstall removes every file make install put there, and its folders' '
	mkdir -p root/usr/bin && echo mine >root/usr/bin/other &&
	(cd root && find . | sort) >before &&
	make_target install "$PWD/root" &&
	test -x root/usr/bin/raymond &&
	make_target uninstall "$PWD/root" &&
	(cd root && find . ! -type d | sort) >after-files &&
	printf "./usr/bin/other\n" >want && diff -u want after-files &&
	! test -e root/usr/share/raymond && ! test -e root/usr/share/doc/raymond &&
	(cd root && find . -type d | sort) >after-dirs &&
	grep -vx -e ./usr/share/man -e ./usr/share/man/man1 -e ./usr/share/doc \
		-e ./usr/share -e ./usr/share/bash-completion \
		-e ./usr/share/bash-completion/completions -e ./usr/share/zsh \
		-e ./usr/share/zsh/site-functions after-dirs >kept &&
	grep -v "^\./usr/share" before | grep -vx ./usr/bin/other >want &&
	diff -u want kept
'

test_expect_success 'make uninstall keeps a folder of raymond holding a file of the user, and says so' '
	make_target install "$PWD/root" &&
	echo "my hook" >root/usr/share/raymond/hooks/mine.lua &&
	make_target uninstall "$PWD/root" &&
	grep -q "kept .*/usr/share/raymond/hooks: it holds files make install did not put there" make-uninstall.out &&
	test -f root/usr/share/raymond/hooks/mine.lua &&
	! test -e root/usr/share/raymond/hooks/budget.lua &&
	! test -e root/usr/bin/raymond
'

test_done
