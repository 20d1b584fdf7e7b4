#!/bin/sh
# Install the Debian packages the cluster tests need, if any is missing:
# a single-node Slurm with munge, and an ssh server for the ssh launcher's
# test.  Safe to run repeatedly: when everything is present it prints
# nothing.  The ssh server is optional: when it does not install, the ssh
# test says it skipped.
set -e
tools="$(dirname "$0")/../../tools"
need=""
for p in munged:munge slurmctld:slurmctld slurmd:slurmd sbatch:slurm-client; do
	command -v "${p%%:*}" >/dev/null 2>&1 || need="$need ${p#*:}"
done
if [ -n "$need" ]; then
	# shellcheck disable=SC2086
	sh "$tools/apt-install.sh" cluster-test $need
fi
if ! [ -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null 2>&1; then
	sh "$tools/apt-install.sh" ssh-test openssh-server openssh-client ||
		echo "raymond: openssh-server did not install; the ssh launcher's test will be skipped" >&2
fi
exit 0
