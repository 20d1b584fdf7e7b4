# tests/cli/slurm-lib.sh - the fake Slurm (tests/fake/slurm) for tests of
# `raymond launch-follow` (sourced after lib.sh).
#
#   spool NAME CWD ARGV...   spool folder ./NAME (tests/cli/spool-lib.sh)
#   follow_args NAME [OPTION...]  set FARGS to the arguments of the
#                            follower of ./NAME as raymond's slurm launcher
#                            gives them, with --check 1 and the options;
#                            run it as "$RAYMOND" launch-follow "${FARGS[@]}",
#                            so that `&` makes $! its pid
#   job_pgid NAME            the fake job's process group (job NAME)
#   queued NAME              squeue lists job NAME
#
# Every fake job still running when the test file ends is killed.

. "$TESTS_TOP/tests/cli/spool-lib.sh"
export PATH="$TESTS_TOP/tests/fake/slurm:$PATH"
export SLURM_FAKE_DIR="$TEST_ROOT/slurm" SLURM_FAKE_LOG="$TEST_ROOT/slurm.log"
mkdir -p "$SLURM_FAKE_DIR"

slurm_cleanup() {
	local f
	for f in "$SLURM_FAKE_DIR"/jobs/*.pid; do
		[ -e "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
	done
	rm -rf "$TEST_ROOT"
}
trap slurm_cleanup EXIT

follow_args() {
	local name=$1 d=$PWD/$1
	shift
	FARGS=("$d" --name "$name" --check 1 "$@"
		--submit 8 sbatch --parsable "--job-name=$name" --export=NONE \
		"--chdir=$d" "--output=$d/slurm.out" --open-mode=append "$d/task.sh"
		--cancel 2 scancel "--name=$name"
		--status 4 squeue --noheader "--name=$name" --format=%i)
}

# By the fake's own record of the name, which is there before the job
# starts, not by NAME/job, which the follower may not have written yet.
job_pgid() { cat "$SLURM_FAKE_DIR/jobs/$(tail -n 1 "$SLURM_FAKE_DIR/names/$1").pid"; }
queued() { [ -n "$(squeue --noheader "--name=$1" --format=%i)" ]; }

# how CMD...: run CMD and write how it ended to ./how, "exit N" or
# "signal N", with " core" when it dumped one (bash alone says 143 for
# both an exit 143 and a SIGTERM).
how() {
	perl -e 'system(@ARGV); open(my $f, ">", "how") or die;
		print $f (($? & 127) ? "signal " . ($? & 127) : "exit " . ($? >> 8)),
			(($? & 128) ? " core" : ""), "\n"' "$@"
}

# submits NAME: how many times job NAME was submitted.
submits() { grep -c -- "^sbatch .* --job-name=$1 " "$SLURM_FAKE_LOG" || true; }
