#!/bin/bash
# Benchmarks; prints a table.  Usage: bench/run.sh BUILD_DIR
#
# Each figure is a ratio against a baseline measured in the same run, so
# the numbers mean the same on a fast or a slow machine:
#   chain   a 1000-step script chain through raymond, against a bash loop
#           running the same script 1000 times (the cost of the scripts
#           themselves), and against the same loop run by sh, whose forks
#           are cheaper; the difference divided by the steps is raymond's
#           own cost per transition, its durable state save and its debug
#           record (on, as by default) included.
#   startup `raymond --version` against `true`.
#   md      a 200-step markdown <goto> chain run with the fake claude of
#           the tests, against a bash loop running the fake 200 times with
#           the same arguments: raymond's own cost per markdown transition.
#   fanout  one state forking 1000 script workers, against bash starting
#           the same 1000 scripts in the background and waiting for them;
#           raymond's peak resident memory.
#   join    the same fan-out with join=: the whole run against the plain
#           fan-out, and the time from the end of the last worker to the
#           start of the join's summary (each script notes
#           $EPOCHREALTIME) against the time from the end of one state to
#           the start of the next across a <goto>.
#   hooks   the four events of a transition dispatched to 4 no-op hook
#           files handling every event, against none (bench/hooks.lua,
#           in the real host): the hooks' cost per transition.
#   stream  a markdown state whose "claude" prints a 100 MB stream-json
#           file, against `cat` of that file: raymond's reading rate in
#           MB/s and its peak resident memory.
#   lint    `raymond lint` of a 1000-state workflow (markdown states with
#           frontmatter, a script in ten), against grep reading the same
#           files for their tags.
#   cluster bench/cluster.sh, only when a Slurm answers sinfo: raymond's
#           processor time holding 50 Slurm jobs.
# Times are the median of REPEAT runs (default 5).
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ray="$build/raymond"
repeat=${REPEAT:-5}
steps=${STEPS:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
mkdir wf
cat >wf/STEP.sh <<EOS
n=\$RAYMOND_INPUT
if [ "\$n" -ge $steps ]; then echo "<result>\$n</result>"; else echo "<goto input=\"\$((n + 1))\">STEP</goto>"; fi
EOS

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

time_ns() { # command...
	local t0 t1
	t0=$(now); "$@" >/dev/null 2>&1; t1=$(now)
	echo $((t1 - t0))
}

chain_loop="i=1; while [ \$i -le $steps ]; do RAYMOND_INPUT=\$i bash wf/STEP.sh >/dev/null; i=\$((i + 1)); done"
bash_chain() { bash -c "$chain_loop"; }
sh_chain() { sh -c "$chain_loop"; }
# With the debug record on, as a user runs it.
ray_chain() { rm -rf .raymond; "$ray" wf/STEP.sh --input 1 --quiet; }
ver() { "$ray" --version; }
tru() { /bin/true; }
ver_loop() { for _ in $(seq 1 100); do "$ray" --version; done; }
true_loop() { for _ in $(seq 1 100); do /bin/true; done; }

measure() { for _ in $(seq 1 "$repeat"); do time_ns "$@"; done | median; }

# 100 MB of assistant lines (900 characters of text each), then a result.
awk 'BEGIN {
	t = sprintf("%900s", ""); gsub(/ /, "x", t)
	line = "{\"type\":\"assistant\",\"message\":{\"id\":\"m\",\"role\":\"assistant\",\"content\":[{\"type\":\"text\",\"text\":\"" t "\"}]},\"session_id\":\"s1\"}"
	print "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}"
	for (n = 0; n < 100 * 1024 * 1024; n += length(line) + 1) print line
	print "{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"<result>done</result>\",\"session_id\":\"s1\",\"total_cost_usd\":0.01}"
}' >stream.jsonl
stream_bytes=$(wc -c <stream.jsonl)
printf '#!/bin/sh\nexec cat "%s/stream.jsonl"\n' "$work" >cat-claude
chmod +x cat-claude
mkdir -p swf
echo "read the stream" >swf/START.md
ray_stream() { rm -rf .raymond; "$ray" swf --claude ./cat-claude --quiet --no-debug; }
cat_stream() { cat stream.jsonl; }
s_ray=$(measure ray_stream)
s_cat=$(measure cat_stream)
if [ -x /usr/bin/time ]; then
	rss=$(rm -rf .raymond; /usr/bin/time -f %M "$ray" swf --claude ./cat-claude --quiet --no-debug 2>&1 >/dev/null | tail -1)
else
	rss=0
fi

# A markdown chain: the MOCK line scripts 199 gotos and then a result.
fake="$build/tests/fake-claude"
md_steps=200
mock="MOCK: $(for _ in $(seq 2 $md_steps); do printf 'reply <goto>STEP</goto> || '; done)reply <result>done</result>"
mkdir -p mwf
# The same reply on every step is the point here, not a stuck model.
printf -- '---\nmax_repeats: 0\n---\nTake one step.\n%s\n' "$mock" >mwf/STEP.md
ray_md() {
	rm -rf .raymond fakedir; mkdir fakedir
	FAKE_CLAUDE_DIR=$PWD/fakedir "$ray" mwf/STEP.md --claude "$fake" --quiet --no-debug --budget 0
}
fake_md() {
	rm -rf fakedir; mkdir fakedir
	local sid=00000000-0000-4000-8000-000000000001 i=1 flags prompt
	prompt=$(cat mwf/STEP.md)
	while [ $i -le $md_steps ]; do
		if [ $i = 1 ]; then flags="--session-id $sid"; else flags="--resume $sid"; fi
		# shellcheck disable=SC2086
		FAKE_CLAUDE_DIR=$PWD/fakedir "$fake" -p --output-format stream-json --verbose \
			--permission-mode acceptEdits $flags --disallowed-tools X -- "$prompt" </dev/null >/dev/null
		i=$((i + 1))
	done
}
m_ray=$(measure ray_md)
m_fake=$(measure fake_md)

# A fan-out: one state forks 1000 script workers.
mkdir -p fwf
{ echo 'for i in $(seq 1 1000); do echo "<fork k=\"$i\">W</fork>"; done'; echo 'echo "<goto>END</goto>"'; } >fwf/START.sh
echo 'echo "<result>w $k</result>"' >fwf/W.sh
echo 'echo "<result>end</result>"' >fwf/END.sh
ray_fan() { rm -rf .raymond; "$ray" fwf --quiet --no-debug; }
bash_fan() { local i; for i in $(seq 1 1000); do k=$i bash fwf/W.sh >/dev/null & done; wait; }
f_ray=$(measure ray_fan)
f_bash=$(measure bash_fan)
if [ -x /usr/bin/time ]; then
	f_rss=$(rm -rf .raymond; /usr/bin/time -f %M "$ray" fwf --quiet --no-debug 2>&1 >/dev/null | tail -1)
else
	f_rss=0
fi

# The same fan-out joined: the workers note when they end, the summary
# when it starts; the gap is what gathering 1000 results takes.  The
# baseline is one <goto> between two states noting the same.
mkdir -p jwf gwf
{ echo 'for i in $(seq 1 1000); do echo "<fork next=\"END\" join=\"SUM\" k=\"$i\">W</fork>"; done'; } >jwf/START.sh
echo 'echo "$EPOCHREALTIME" >>ends; echo "<result>w $k</result>"' >jwf/W.sh
echo 'echo "<result>end</result>"' >jwf/END.sh
echo 'echo "$EPOCHREALTIME" >sum-start; echo "<result>sum</result>"' >jwf/SUM.sh
echo 'echo "$EPOCHREALTIME" >ends; echo "<goto>B</goto>"' >gwf/START.sh
echo 'echo "$EPOCHREALTIME" >sum-start; echo "<result>b</result>"' >gwf/B.sh
# gap_ns WORKFLOW: the time from the last line of ends to sum-start.
gap_ns() {
	rm -rf .raymond ends sum-start
	"$ray" "$1" --quiet --no-debug >/dev/null 2>&1
	awk -v s="$(cat sum-start)" '{ if ($1 > m) m = $1 } END { printf "%d\n", (s - m) * 1e9 }' ends
}
ray_join() { rm -rf .raymond ends; "$ray" jwf --quiet --no-debug; }
j_ray=$(measure ray_join)
j_gap=$(for _ in $(seq 1 "$repeat"); do gap_ns jwf; done | median)
g_gap=$(for _ in $(seq 1 "$repeat"); do gap_ns gwf; done | median)

# A 1000-state chain to lint: START, S0002 ... S1000, every tenth a script.
mkdir -p lwf
for i in $(seq 1 1000); do
	name=$(printf "S%04d" "$i"); [ "$i" = 1 ] && name=START
	next=$(printf "S%04d" $((i + 1))); [ "$i" = 1000 ] && next=START
	if [ $((i % 10)) = 0 ]; then
		if [ "$i" = 1000 ]; then echo 'echo "<result>done</result>"'; else echo "echo \"<goto>$next</goto>\""; fi >"lwf/$name.sh"
	else
		printf -- '---\nmodel: haiku\nmax_visits: 3\nallowed_transitions:\n  - { tag: goto, target: %s }\n  - { tag: result, payload: DONE }\n---\nWork on {{input}}, then go to %s: <goto>%s</goto>\nor end with <result>DONE</result>\n' \
			"$next" "$next" "$next" >"lwf/$name.md"
	fi
done
ray_lint() { "$ray" lint lwf; }
grep_lint() { grep -h "<goto>\|<result>" lwf/*; }
l_ray=$(measure ray_lint)
l_grep=$(measure grep_lint)

hooks_line=$("$build/tests/luarun" "$top/tests/lua/testing.lua" "$top/bench/hooks.lua" | grep '^HOOKS')

b=$(measure bash_chain)
d=$(measure sh_chain)
r=$(measure ray_chain)
v=$(measure ver_loop)
t=$(measure true_loop)

awk -v r="$r" -v b="$b" -v d="$d" -v v="$v" -v t="$t" -v n="$steps" \
    -v sr="$s_ray" -v sc="$s_cat" -v sb="$stream_bytes" -v rss="$rss" \
    -v mr="$m_ray" -v mf="$m_fake" -v mn="$md_steps" -v hk="$hooks_line" \
    -v fr="$f_ray" -v fb="$f_bash" -v frss="$f_rss" -v lr="$l_ray" -v lg="$l_grep" \
    -v jr="$j_ray" -v jg="$j_gap" -v gg="$g_gap" 'BEGIN {
	printf "%-34s %12s %12s %8s\n", "benchmark", "raymond", "baseline", "ratio"
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "chain of " n " script steps", r / 1e6, b / 1e6, r / b
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "  the same, against an sh loop", r / 1e6, d / 1e6, r / d
	printf "%-34s %10.3fms %10.3fms\n", "raymond cost per transition", (r - b) / n / 1e6, (r - d) / n / 1e6
	printf "%-34s %10.3fms %10.3fms %7.2fx\n", "raymond --version (one run)", v / 100 / 1e6, t / 100 / 1e6, v / t
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "chain of " mn " markdown steps (fake)", mr / 1e6, mf / 1e6, mr / mf
	printf "%-34s %10.3fms\n", "raymond cost per markdown step", (mr - mf) / mn / 1e6
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "fan-out of 1000 script agents", fr / 1e6, fb / 1e6, fr / fb
	printf "%-34s %8.1f MB\n", "fan-out peak RSS of raymond", frss / 1024
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "the same fan-out, joined", jr / 1e6, fr / 1e6, jr / fr
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "last worker end -> summary start", jg / 1e6, gg / 1e6, jg / gg
	split(hk, h, " ")
	printf "%-34s %10.1fus %10.1fus\n", "4 no-op hook files, per transition", h[4], h[3]
	printf "%-34s %10.1fus\n", "no-op hooks, cost per transition", h[4] - h[3]
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "100 MB stream-json, one turn", sr / 1e6, sc / 1e6, sr / sc
	printf "%-34s %8.0fMB/s  peak RSS %.1f MB\n", "stream-json reading rate", sb / 1048576 / (sr / 1e9), rss / 1024
	printf "%-34s %10.1fms %10.1fms %7.2fx\n", "lint of 1000 states", lr / 1e6, lg / 1e6, lr / lg
}'
# The hook bridge's round trip has a script of its own, and so has <ask>.
bash "$top/bench/bridge.sh" "$build"
# So do cross-workflow calls against plain ones, and an <ask>'s pause
# and answer.
bash "$top/bench/xworkflow.sh" "$build"
bash "$top/bench/ask.sh" "$build"
# And raymond test: a 50-state scripted case, 100 cases of the examples.
bash "$top/bench/test.sh" "$build"
# And raymond serve: GET /api/runs over 10,000 runs, 200 event streams
# over 50 runs.
sh "$top/bench/serve.sh" "$build"
# And a launch through the follower of a spool launch (fake Slurm, and a
# real one when it answers) against a local spawn.
bash "$top/bench/launch.sh" "$build"
# And the slurm launcher holding 50 jobs, only when a Slurm answers
# (SLURM_CONF names it, or the system's): bench/cluster.sh.
if command -v sinfo >/dev/null 2>&1 && sinfo --noheader >/dev/null 2>&1; then
	bash "$top/bench/cluster.sh" "$build"
fi
