#!/bin/bash
# The ssh launcher against a real sshd on loopback: a state on a launcher
# configured as `base: ssh` runs its script on the "remote" host through
# `ssh ... sh -s`, its lines stream back, its exit status comes through,
# and Ctrl-C stops the remote command.
#
# The test starts its own sshd (a free port, its own host key, key
# authentication with a key made here, its own configuration) and stops
# it at the end.  `ssh` on PATH is a wrapper that adds `-F` with this
# test's client configuration, so that the launcher's own argv reaches the
# real ssh unchanged.  Without openssh-server, or not as root (sshd needs
# its privilege separation folder), the file says it skipped.
. "$(dirname "$0")/lib.sh"
. "$CLUSTER_TOP/slurm-lib.sh"

if ! [ -x /usr/sbin/sshd ] || ! command -v ssh >/dev/null 2>&1 || [ "$(id -u)" != 0 ]; then
	echo "SKIP t0009-ssh: needs openssh-server and openssh-client, as root"
	echo "PASS t0009-ssh: skipped (no sshd)"
	exit 0
fi

SSH_DIR="$TEST_ROOT/ssh"
real_ssh=$(command -v ssh)
mkdir -p "$SSH_DIR/bin" /run/sshd || exit 1
port=$(free_port_pair 17922)
ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/host_key" &&
ssh-keygen -q -t ed25519 -N '' -f "$SSH_DIR/user_key" &&
cp "$SSH_DIR/user_key.pub" "$SSH_DIR/authorized_keys" || exit 1
printf '%s\n' "Port $port" "ListenAddress 127.0.0.1" "HostKey $SSH_DIR/host_key" \
	"PidFile $SSH_DIR/sshd.pid" "AuthorizedKeysFile $SSH_DIR/authorized_keys" \
	"PasswordAuthentication no" "KbdInteractiveAuthentication no" "UsePAM no" \
	"PermitRootLogin prohibit-password" "StrictModes no" "LogLevel ERROR" \
	>"$SSH_DIR/sshd_config"
echo "[127.0.0.1]:$port $(cat "$SSH_DIR/host_key.pub")" >"$SSH_DIR/known_hosts"
printf '%s\n' "Host raytest" "  HostName 127.0.0.1" "  Port $port" "  User $(id -un)" \
	"  IdentityFile $SSH_DIR/user_key" "  IdentitiesOnly yes" \
	"  UserKnownHostsFile $SSH_DIR/known_hosts" "  StrictHostKeyChecking yes" \
	>"$SSH_DIR/ssh_config"
printf '#!/bin/sh\nexec %s -F %s "$@"\n' "$real_ssh" "$SSH_DIR/ssh_config" >"$SSH_DIR/bin/ssh"
chmod +x "$SSH_DIR/bin/ssh"
export PATH="$SSH_DIR/bin:$PATH"

/usr/sbin/sshd -D -e -f "$SSH_DIR/sshd_config" 2>"$SSH_DIR/sshd.log" &
SSHD_PID=$!
prev=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
# shellcheck disable=SC2064
trap "kill $SSHD_PID 2>/dev/null; wait $SSHD_PID 2>/dev/null; $prev" EXIT
ssh_up() { ssh -T -o BatchMode=yes raytest true >/dev/null 2>&1; }
if ! wait_until 30 ssh_up; then
	echo "FAIL t0009-ssh: sshd did not come up"
	cat "$SSH_DIR/sshd.log"
	exit 1
fi

# box_config: the project's config names the launcher `box`, an ssh one.
box_config() {
	mkdir -p .raymond &&
	printf '%s\n' "raymond:" "  launchers:" "    box:" "      base: ssh" "      host: raytest" \
		>.raymond/config.yaml
}

test_expect_success 'a state on an ssh launcher runs through sshd, streams, and keeps the environment' '
	box_config &&
	export WORK_DIR=$PWD SECRET_TOKEN=s3cret &&
	fan_out 1 box &&
	state W.sh <<-\EOS
	echo "<print>over ssh: ${SSH_CONNECTION:+yes} $item $SECRET_TOKEN</print>"
	until [ -e "$WORK_DIR/go" ]; do [ -d "$WORK_DIR" ] || exit 1; sleep 0.1; done
	echo "<result>w$item</result>"
	EOS
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	stop_on_exit $pid
	wait_for_line out "^over ssh: yes 1 s3cret$" &&
	touch go &&
	wait $pid &&
	test "$(tail -1 out)" = "parent done"
'

test_expect_success 'a failing remote script fails its state, naming it and the exit status' '
	box_config &&
	state START.sh <<-\EOS &&
	#!/bin/bash
	# ---
	# launcher: box
	# ---
	echo "trouble on ${SSH_CONNECTION:+the remote side}" >&2
	exit 3
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	cat err &&
	grep -F "START.sh" err &&
	grep -F "trouble on the remote side" err &&
	grep -F "status 3" err
'

test_expect_success 'Ctrl-C stops the remote command' '
	box_config &&
	export WORK_DIR=$PWD &&
	state START.sh <<-\EOS
	#!/bin/bash
	# ---
	# launcher: box
	# ---
	echo "$SSH_CONNECTION" >"$WORK_DIR/connection"
	echo $$ >"$WORK_DIR/remote.pid"
	while [ -d "$WORK_DIR" ]; do sleep 1; done
	EOS
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	stop_on_exit $pid
	wait_for_file remote.pid &&
	remote=$(cat remote.pid) &&
	is_running "$remote" &&
	grep -q "^127.0.0.1 " connection &&
	kill -INT $pid &&
	{ wait_for_exit $pid 30 || { cat err; ps -o pid,stat,args --ppid $pid; false; }; } &&
	wait_for_exit "$remote" 10
'

test_done
