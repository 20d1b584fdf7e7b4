#!/bin/bash
# What a started command gets: a clean signal state, an empty stdin, a
# session of its own, and the program execvp would find.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

test_expect_success 'a script starts with no signal ignored or blocked, stdin empty, in its own session' '
	state START.sh <<-\EOS &&
	read -r pid comm st ppid pgrp sid rest </proc/$$/stat
	ign=$(sed -n "s/^SigIgn:[[:space:]]*//p" /proc/self/status)
	blk=$(sed -n "s/^SigBlk:[[:space:]]*//p" /proc/self/status)
	input=$(cat)
	echo "<result>pgrp=$((pgrp == $$)) sid=$((sid == $$)) ign=$ign blk=$blk input=[$input]</result>"
	EOS
	raymond wf --quiet >out </dev/zero &&
	echo "pgrp=1 sid=1 ign=0000000000000000 blk=0000000000000000 input=[]" >want &&
	diff want out
'

test_expect_success 'a --claude program without #! runs through /bin/sh, as a shell would' '
	mkdir -p fake &&
	printf "exec \"%s\" \"\$@\"\n" "$FAKE" >wrapper &&
	chmod +x wrapper &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ran</result>
	EOS
	FAKE_CLAUDE_DIR=$PWD/fake raymond wf --claude ./wrapper --quiet >out &&
	test "$(cat out)" = ran
'

test_expect_success 'a --claude name is found on PATH, past a file there that cannot run' '
	mkdir -p fake bin1 bin2 &&
	echo "not a program" >bin1/agent-cli &&
	ln -s "$FAKE" bin2/agent-cli &&
	state START.md <<-\EOS &&
	MOCK: reply <result>found</result>
	EOS
	PATH=$PWD/bin1:$PWD/bin2:$PATH FAKE_CLAUDE_DIR=$PWD/fake raymond wf --claude agent-cli --quiet >out &&
	test "$(cat out)" = found
'

test_expect_success 'a program that moves to another PATH folder mid-run is found again' '
	mkdir -p fake bin1 bin2 &&
	cp "$FAKE" bin1/agent-cli &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>MOVE</goto>
	EOS
	state MOVE.sh <<-\EOS &&
	mv "$BIN1/agent-cli" "$BIN2/agent-cli" && echo "<goto>LAST</goto>"
	EOS
	state LAST.md <<-\EOS &&
	MOCK: reply <result>still found</result>
	EOS
	export BIN1=$PWD/bin1 BIN2=$PWD/bin2 &&
	PATH=$BIN1:$BIN2:$PATH FAKE_CLAUDE_DIR=$PWD/fake raymond wf --claude agent-cli --quiet >out &&
	test "$(cat out)" = "still found" &&
	test -x bin2/agent-cli
'

test_expect_success 'a state whose directory is gone fails naming the directory, and can resume' '
	state START.sh <<-\EOS &&
	mkdir -p d && echo "<reset cd=\"d\">GONE</reset>"
	EOS
	state GONE.sh <<-\EOS &&
	rmdir "$PWD" && echo "<goto>LAST</goto>"
	EOS
	state LAST.sh <<-\EOS &&
	echo "<result>last ran in $(basename "$PWD")</result>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	grep -q "cannot start .bash. in $PWD/d: no such file or directory" err &&
	grep -q "raymond --resume" err &&
	mkdir d &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "last ran in d"
'

test_expect_success 'raymond started with stdin and stdout closed still reads every state' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>fine</result>"
	EOS
	raymond wf <&- >&- 2>err &&
	grep -q "B.sh -> result" err &&
	grep -q "\"status\":\"completed\"" "$(state_file)"
'

test_done
