#!/bin/sh
# raymond serve under load.
#
#   list     GET /api/runs with RUNS (10,000) runs on disk: completed,
#            failed, asking and interrupted ones mixed (6, 2, 1, 1 in
#            10; an interrupted one with the lock file a killed raymond
#            leaves), made by copying the state files of real runs
#            under new ids.  The first
#            request (nothing read yet), then the median and the largest
#            of REPEAT (9) more; against `cat` of the same state files
#            (reading them, nothing else) and `raymond list --json` (the
#            same listing, each file read and checked afresh, in a
#            process of its own).
#
#   events   RUNS_LIVE (50) runs launched through POST /api/runs, each a
#            script state that sleeps STEP (0.5 s) and goes to itself,
#            and STREAMS (200) clients of GET /api/runs/ID/events over
#            them (bench/sse-client.c, one process, one epoll) for
#            SECONDS_LOAD (25): from each transition's `at` (the time
#            the engine wrote it) to the event's arrival at the client,
#            the median, the 99th percentile and the largest of those
#            written after the first WARMUP (5) seconds, while 200
#            streams read the runs' history, and with them; against one
#            run with one stream, measured the same way; and how late
#            a 10 ms timer of the client wakes it meanwhile, what the
#            machine's load adds to any wake-up (the daemon's too).  The daemon's
#            resident memory (VmHWM, its peak, and VmRSS at the end, from
#            /proc) against the same daemon before any run, and its own
#            processor time over the window.
#
# RUNS=0 leaves out the listing, RUNS_LIVE=0 the events.
#
#   bench/serve.sh BUILD_DIR
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ray="$build/raymond"
runs=${RUNS:-10000}
repeat=${REPEAT:-9}
live=${RUNS_LIVE:-50}
streams=${STREAMS:-200}
seconds=${SECONDS_LOAD:-25}
warmup=${WARMUP:-5}
step=${STEP:-0.5}
work=$(mktemp -d)
server=
# The runs launched end at their next step once the stop file is there.
trap 'touch "$work/stop"; [ -z "$server" ] || kill "$server" 2>/dev/null; sleep 1; rm -rf "$work"' EXIT
cd "$work"
command -v curl >/dev/null 2>&1 || sh "$top/tools/apt-install.sh" bench curl >&2

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
largest() { sort -n | tail -1; }

# serve: raymond serve here on a free port; sets server, port, base, token.
serve() {
	"$ray" serve --listen 127.0.0.1:0 >serve.out 2>serve.err &
	server=$!
	until grep -q '^log in once with: ' serve.out 2>/dev/null; do
		kill -0 "$server" 2>/dev/null || { cat serve.err >&2; exit 1; }
		sleep 0.01
	done
	base=$(sed -n 's|^raymond serve: listening on \(http://[^ ]*\)/$|\1|p' serve.out)
	port=${base##*:}
	token=$(cat .raymond/serve/token)
}

# vm FIELD: the daemon's /proc status field in MB.
vm() { awk -v f="$1:" '$1 == f { printf "%.1f", $2 / 1024 }' "/proc/$server/status"; }
# cpu: the daemon's processor time so far, in clock ticks.
cpu() { awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$server/stat"; }
# ---------------------------------------------------------------- the runs

if [ "$runs" -gt 0 ]; then

# One real run of each kind, whose state files are the models.
mkdir ok bad ask loop
printf 'echo "<goto input=\\"2\\">NEXT.sh</goto>"\n' >ok/START.sh
printf 'echo "<result>done $RAYMOND_INPUT</result>"\n' >ok/NEXT.sh
echo 'exit 3' >bad/START.sh
echo 'echo "<ask next=\"START.sh\">Approve?</ask>"' >ask/START.sh
echo 'sleep 1' >loop/START.sh
"$ray" ok --workflow-id m-ok --quiet >/dev/null
"$ray" bad --workflow-id m-bad --quiet >/dev/null 2>&1 || true
"$ray" ask --workflow-id m-ask --on-ask pause --quiet >/dev/null 2>&1 || true
# A run killed after its first save reads as interrupted (saved as
# running, its lock free); its journal is left out of the copies.
"$ray" loop --workflow-id m-int --quiet >/dev/null 2>&1 &
pid=$!
until [ -f .raymond/state/m-int.json ]; do sleep 0.01; done
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
# Its script, left running, ends by itself within the second.
rm -f .raymond/state/m-int.journal .raymond/state/m-int.lock

# RUNS copies, a second apart in creation, six in ten completed, two
# failed, one asking, one interrupted.
st=.raymond/state
awk -v n="$runs" -v ok="$st/m-ok.json" -v bad="$st/m-bad.json" -v ask="$st/m-ask.json" -v intr="$st/m-int.json" -v dir="$st" '
function slurp(f,   t, l) { t = ""; while ((getline l <f) > 0) t = t l "\n"; close(f); return t }
BEGIN {
	m[0] = slurp(ok); m[1] = m[0]; m[2] = m[0]; m[3] = m[0]; m[4] = m[0]; m[5] = m[0]
	m[6] = slurp(bad); m[7] = m[6]; m[8] = slurp(ask); m[9] = slurp(intr)
	for (i = 1; i <= n; i++) {
		id = sprintf("bench-%05d", i)
		t = m[i % 10]
		sub(/"id":"m-[a-z]+"/, "\"id\":\"" id "\"", t)
		s = 1700000000 + i
		c = strftime("%Y-%m-%dT%H:%M:%S", s, 1) ".000000Z"
		sub(/"created_at":"[^"]*"/, "\"created_at\":\"" c "\"", t)
		f = dir "/" id ".json"
		printf "%s", t >f
		close(f)
		# A killed raymond leaves the lock file of the run, not held.
		if (i % 10 == 9) { f = dir "/" id ".lock"; printf "" >f; close(f) }
	}
}'
rm -f "$st"/m-*.json
rm -rf "$st"/m-*.children
total=$(ls "$st" | grep -c '\.json$')

# ---------------------------------------------------------------- serve

serve

# get PATH: the seconds the request took, its body in ./body.
get() { curl -sf -o body -w '%{time_total}\n' -H "Authorization: Bearer $token" "$base$1"; }

first=$(get /api/runs)
got=$(grep -c '"id":"bench-' body || true)
[ "$got" = "$runs" ] || { echo "bench/serve.sh: GET /api/runs listed $got runs of $runs" >&2; exit 1; }
grep -q '"status":"interrupted"' body && grep -q '"status":"asking"' body ||
	{ echo "bench/serve.sh: GET /api/runs lacks a kind of run" >&2; exit 1; }
i=0
: >times
while [ $i -lt "$repeat" ]; do get /api/runs >>times; i=$((i + 1)); done
warm=$(median <times)
worst=$(largest <times)

: >cat.times
: >list.times
i=0
while [ $i -lt 5 ]; do
	t0=$(now); cat "$st"/*.json >/dev/null; t1=$(now)
	"$ray" list --json >/dev/null; t2=$(now)
	echo $((t1 - t0)) >>cat.times
	echo $((t2 - t1)) >>list.times
	i=$((i + 1))
done
catt=$(median <cat.times)
listt=$(median <list.times)
lhwm=$(vm VmHWM)

awk -v n="$total" -v f="$first" -v w="$warm" -v x="$worst" -v c="$catt" -v l="$listt" -v m="$lhwm" 'BEGIN {
	printf "%-38s %9.1fms %9.1fms %7.2fx   (cat of the state files)\n", "GET /api/runs, " n " runs, first", f * 1000, c / 1e6, f * 1e9 / c
	printf "%-38s %9.1fms %9.1fms %7.2fx   (target: 50 ms)\n", "GET /api/runs, median (largest)", w * 1000, x * 1000, w * 1e9 / c
	printf "%-38s %9.1fms\n", "raymond list --json, same runs", l / 1e6
	printf "%-38s %8.1fMB\n", "daemon peak RSS (VmHWM), listing", m
}'

kill "$server"
wait "$server" 2>/dev/null || true
server=
fi

# ---------------------------------------------------------------- events

[ "$live" -gt 0 ] || exit 0

cc -std=c11 -O2 -o sse-client "$top/bench/sse-client.c"
# A project of its own: the runs above stay out of it.
mkdir -p load/.raymond
cd load
mkdir loop
cat >loop/START.sh <<EOS
if [ -e "$work/stop" ]; then echo "<result>stopped</result>"; exit 0; fi
sleep $step
echo "<goto input=\"\$((\${RAYMOND_INPUT:-0} + 1))\">START</goto>"
EOS
serve

launch() {
	curl -sf -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
		-d '{"workflow":"loop"}' "$base/api/runs" | sed -n 's/.*"id":"\([^"]*\)".*/\1/p'
}
idle_rss=$(vm VmRSS)

# One run, one stream: the floor.
one=$(launch)
floor=$(../sse-client "$port" "$token" 1 "$((seconds / 2))" 0 "$one")

ids=
i=0
while [ $i -lt "$live" ]; do ids="$ids $(launch)"; i=$((i + 1)); done
load0=$(cut -d' ' -f1 /proc/loadavg)
c0=$(cpu)
# shellcheck disable=SC2086
loaded=$(../sse-client "$port" "$token" "$streams" "$seconds" "$warmup" $ids)
c1=$(cpu)
load1=$(cut -d' ' -f1 /proc/loadavg)
hwm=$(vm VmHWM)
rss=$(vm VmRSS)
touch "$work/stop"
i=0
while ls .raymond/state/*.lock >/dev/null 2>&1 && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done

echo "$floor" | grep -q ' transitions [1-9]' && echo "$loaded" | grep -q ' transitions [1-9]' ||
	{ echo "bench/serve.sh: no transition came: $floor / $loaded" >&2; exit 1; }
tick=$(getconf CLK_TCK)
awk -v f="$floor" -v l="$loaded" -v live="$live" -v idle="$idle_rss" -v hwm="$hwm" -v rss="$rss" \
	-v c="$((c1 - c0))" -v tick="$tick" -v s="$seconds" -v w="$warmup" -v l0="$load0" -v l1="$load1" 'BEGIN {
	split(f, a, " "); split(l, b, " ")
	# 2 streams, 4 open, 6 events; all: 8 count, 10 p50, 12 p99, 14 max;
	# steady: 16 count, 18 p50, 20 p99, 22 max; 24 the CPU ms of the client;
	# a 10 ms timer of the client, how late: 26 count, 28 p50, 30 p99, 32 max
	printf "%-38s %9.1fms %9.1fms %7.2fx   (1 run, 1 stream)\n", "events, " live " runs " b[2] " streams, p50", b[18], a[10], b[18] / a[10]
	printf "%-38s %9.1fms %9.1fms %7.2fx   (target: 100 ms)\n", "  p99", b[20], a[12], b[20] / a[12]
	printf "%-38s %9.1fms %9.1fms\n", "  largest", b[22], a[14]
	printf "%-38s %9.1fms %9.1fms   p99 and largest, the first %d s too\n", "  with the connects: p99", b[12], b[14], w
	printf "%-38s %9d  streams open at the end %d, events %d, the client %.0f ms of CPU\n", "  transitions measured", b[16], b[4], b[6], b[24]
	printf "%-38s %9.1fms  p50 %.1f ms, largest %.1f ms: what the load adds to a wake-up\n", "a 10 ms timer of the client, late p99", b[30], b[28], b[32]
	printf "%-38s %8.1fMB  VmRSS at the end %.1f MB, idle %.1f MB   (target: 64 MB)\n", "daemon peak RSS (VmHWM)", hwm, rss, idle
	printf "%-38s %8.0f%%  of one core over %d s; load average %s -> %s\n", "daemon CPU", c / tick / s * 100, s, l0, l1
}'
