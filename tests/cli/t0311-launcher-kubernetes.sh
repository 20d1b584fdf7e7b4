#!/bin/bash
# The kubernetes launcher (docs/cluster.md), with a fake kubectl on PATH
# that records its argv and plays the stream it is given to sh -s, as the
# pod would: the pod is named after the job, in the image and namespace
# of the config; the variables go over stdin; a state's inactivity
# timeout deletes the pod.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/launch-lib.sh"

kube_config() {
	mkdir -p .raymond &&
	cat >.raymond/config.yaml <<-\EOS
	raymond:
	  launchers:
	    kube:
	      base: kubernetes
	      image: alpine:3
	      namespace: ci
	EOS
}

test_expect_success 'a script state naming kube in its header runs in a pod: argv, stdin, output, exit' '
	kube_config &&
	export FAKE_KUBECTL_LOG=$PWD/k.log OUT=$PWD API_KEY="k3y with '\''quotes'\''" &&
	state START.sh <<-\EOS &&
	#!/bin/bash
	# ---
	# launcher: kube
	# ---
	printf "%s" "$API_KEY" >"$OUT/key"
	echo "<goto>LOCAL.sh</goto>"
	EOS
	state LOCAL.sh <<-\EOS &&
	echo "${RAYMOND_JOB:-here}" >"$OUT/local"
	echo "<result>done</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test "$(cat key)" = "$API_KEY" &&
	test "$(cat local)" = here &&
	sed -n "/--end--/q;p" k.log >argv &&
	job=$(sed -n 2p argv) &&
	expr "$job" : "ray-main-[0-9a-f]\{8\}$" >/dev/null &&
	printf "%s\n" run "$job" --image=alpine:3 --namespace=ci --restart=Never --rm -i --quiet -- sh -s >want &&
	diff want argv &&
	! grep -q k3y k.log &&
	grep -q "k3y" k.log.stdin
'

test_expect_success 'a script that exits non-zero in the pod fails the state with its status' '
	kube_config &&
	export FAKE_KUBECTL_LOG=$PWD/k.log &&
	state START.sh <<-\EOS &&
	echo "bad things" >&2
	exit 6
	EOS
	expect_status 1 raymond wf --launcher kube 2>err &&
	grep -q "script exited with status 6" err &&
	grep -q "bad things" err
'

test_expect_success 'a timeout ends the local kubectl and deletes the pod by its name' '
	kube_config &&
	export FAKE_KUBECTL_LOG=$PWD/k.log &&
	state START.sh <<-\EOS &&
	sleep 30
	EOS
	expect_status 1 raymond wf --launcher kube --timeout 1 2>err &&
	grep -q "produced no output for 1 seconds" err &&
	job=$(sed -n 2p k.log) &&
	grep -A6 -x delete k.log >del &&
	printf "%s\n" delete pod "$job" --namespace=ci --wait=false --end-- >want &&
	diff want del
'

test_expect_success 'a working directory missing on the node is a launch error naming the launcher' '
	mkdir -p .raymond &&
	cat >.raymond/config.yaml <<-\EOS &&
	raymond:
	  launchers:
	    away:
	      run: [sh, -c, "sed \"s|{cwd}|/nonexistent/x|\" | sh -s"]
	EOS
	export OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo ran >"$OUT/ran"
	echo "<result>ran</result>"
	EOS
	expect_status 1 raymond wf --launcher away 2>err &&
	grep -q "launcher away: working directory /nonexistent/x does not exist on node " err &&
	! test -e ran &&
	state_json | grep -q "\"state\":\"START.sh\""
'

test_done
