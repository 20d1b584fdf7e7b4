# tests/cli/spool-lib.sh - a spool folder as raymond writes it for a spool
# launch (docs/architecture.md, "Launchers"), for the tests and benches of
# `raymond launch-follow`, which need one without the Lua side:
#
#   spool NAME CWD ARGV...   make ./NAME (0700) for a job that runs ARGV in
#                            CWD: env (PATH and SPOOL_VAR="it's here") and
#                            task.sh, which writes started, runs ARGV with
#                            stdout to out and stderr to err, then writes
#                            exit; or launch-error and exit 125 when CWD or
#                            ARGV[0] is missing on the node.

# sq STRING: STRING in single quotes for sh.
sq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

spool() {
	local name=$1 cwd=$2 d a cmd=
	shift 2
	mkdir -m 700 "$name"
	d=$PWD/$name
	for a in "$@"; do cmd="$cmd $(sq "$a")"; done
	{
		echo "export PATH=$(sq "$PATH")"
		echo "export SPOOL_VAR=$(sq "it's here")"
	} >"$d/env"
	cat >"$d/task.sh" <<-EOS
	#!/bin/sh
	umask 077
	D=$(sq "$d")
	h=\$(hostname)
	put() { printf '%s\n' "\$2" >"\$D/\$1.tmp" && mv -f "\$D/\$1.tmp" "\$D/\$1"; }
	fail() { put launch-error "\$1"; put exit 125; exit 125; }
	put started "\$h \$\$ \${SLURM_JOB_ID:-}"
	cd -- $(sq "$cwd") 2>/dev/null || fail "working directory $cwd does not exist on node \$h"
	. "\$D/env"
	command -v $(sq "$1") >/dev/null 2>&1 || fail "$1 not found on node \$h (PATH=\$PATH)"
	trap 'raymond_got=1' TERM INT HUP
	$cmd </dev/null >"\$D/out" 2>"\$D/err"
	s=\$?
	put exit "\$s"
	exit "\$s"
	EOS
	chmod 700 "$d/task.sh"
}

