-- raymond.launchers: choosing a launcher, the config's templates and
-- their placeholders, and the shell text a launch runs on the other side
-- (task.sh and env of a spool folder, the stream script), run here with sh.
local T = require("testing")
local raymond = require("raymond")
local launchers = require("raymond.launchers")
local template = require("raymond.launchers.template")
local script = require("raymond.launchers.script")
local spool = require("raymond.launchers.spool")

local function fake_run(launch) return { rec = { launch = launch or {} } } end

T.test("the state's launcher wins over the agent's, the agent's over the run's, the run's over local", function()
  local defs = { gpu = { name = "gpu", base = "slurm", partition = "gpu", cpus = "4" } }
  local run = fake_run({ launcher = "gpu", launchers = defs })
  T.eq(launchers.choose(fake_run(), {}, nil).name, "local")
  T.eq(launchers.choose(fake_run(), {}, nil).kind, "local")
  T.eq(launchers.choose(run, {}, nil).name, "gpu")
  T.eq(launchers.choose(run, {}, nil).kind, "spool")
  T.eq(launchers.choose(run, { launcher = "local" }, nil).name, "local")
  T.eq(launchers.choose(run, { launcher = "local" }, "gpu").name, "gpu")
  local l = launchers.choose(run, {}, { name = "gpu", cpus = "8", time = "10:00" })
  T.eq(l.cpus, "8", "the state's resources win")
  T.eq(l.partition, "gpu", "the config's stay where the state gives none")
  T.eq(l.time, "10:00")
end)

T.test("an unknown launcher is an error naming it and the launchers there are", function()
  local l, err = launchers.choose(fake_run({ launchers = { box = { name = "box", run = { "x" } } } }), {}, "slrum")
  T.eq(l, nil)
  T.eq(err, "launcher slrum: no such launcher (built in: local, slurm, ssh, kubernetes; configured: box)")
  l, err = launchers.choose(fake_run(), {}, "ssh")
  T.eq(l, nil)
  T.has(err, "launcher ssh: a ssh launcher needs host:")
end)

T.test("a state's launcher value is a name or a mapping of a name and resources", function()
  T.eq(launchers.spec_error("slurm"), nil)
  T.eq(launchers.spec_error({ name = "slurm", cpus = "2", mem = "4G", args = { "--qos=low" } }), nil)
  T.has(launchers.spec_error({ name = "slurm", cpu = "2" }), "unknown key 'cpu'")
  T.has(launchers.spec_error({ cpus = "2" }), "needs name:")
  T.has(launchers.spec_error({ name = "slurm", cpus = "many" }), "cpus must be a number")
  T.has(launchers.spec_error("../x"), "is not a launcher name")
end)

T.test("a script's header block names its launcher", function()
  local v = launchers.script_header("#!/bin/bash\n# ---\n# launcher: {name: slurm, cpus: 2}\n# ---\necho hi\n")
  T.same(v, { name = "slurm", cpus = "2" })
  T.eq(launchers.script_header("#!/bin/bash\n# ---\n# launcher: ssh\n# ---\n"), "ssh")
  T.eq(launchers.script_header("#!/bin/bash\necho '<result>x</result>'\n"), nil)
  T.eq(launchers.script_header("#!/bin/bash\n# ---\n# launcher: ssh\necho unclosed\n"), nil)
  local none, err = launchers.script_header("#!/bin/bash\n# ---\n# launcher: {name: x, cpu: 1}\n# ---\n")
  T.eq(none, nil)
  T.has(err, "unknown key 'cpu'")
end)

T.test("placeholders: filled in, an element without a value left out, {resources} spliced", function()
  local argv = template.expand({ "run", "{job}", "--namespace={namespace}", "{resources}", "--image={image}" },
    { job = "ray-a-1", image = "alpine" }, { "--cpus=2", "--mem=1G" })
  T.same(argv, { "run", "ray-a-1", "--cpus=2", "--mem=1G", "--image=alpine" })
  T.eq(template.command({ "echo", "it's", "$(x)" }), "'echo' 'it'\\''s' '$(x)'")
  local slurm = launchers.BUILTIN.slurm
  T.same(slurm.resources({ partition = "gpu", cpus = "2", time = "10:00", gpus = "1", args = { "--qos=x" } }),
    { "--partition=gpu", "--cpus-per-task=2", "--time=10:00", "--gres=gpu:1", "--qos=x" })
end)

T.test("the config's launchers: are checked, an unknown placeholder named with FILE:LINE", function()
  local src = "raymond:\n  launchers:\n    batch:\n      submit: [qsub, -N, '{jbo}', '{script}']\n"
    .. "      status: [qstat, '{job}']\n      cancel: [qdel, '{job}']\n"
  local doc, lines = raymond.yaml(src, "c.yaml")
  local defs, err = template.parse(doc.raymond.launchers, lines, "c.yaml", 2, launchers.BUILTIN)
  T.eq(defs, nil)
  T.eq(err:match("^[^ ]+"), "c.yaml:4:")
  T.has(err, "launchers: batch: submit: unknown placeholder {jbo} in '{jbo}'")
  doc, lines = raymond.yaml(src:gsub("jbo", "job"), "c.yaml")
  defs = template.parse(doc.raymond.launchers, lines, "c.yaml", 2, launchers.BUILTIN)
  T.same(defs.batch.submit, { "qsub", "-N", "{job}", "{script}" })
  T.eq(launchers.resolve("batch", nil, defs).kind, "spool")
  doc, lines = raymond.yaml("l:\n  box:\n    base: ssh\n", "c.yaml")
  defs, err = template.parse(doc.l, lines, "c.yaml", 1, launchers.BUILTIN)
  T.eq(err, "c.yaml:2: launchers: box: a ssh launcher needs host:")
  doc, lines = raymond.yaml("l:\n  box:\n    run: [x]\n    colour: red\n", "c.yaml")
  defs, err = template.parse(doc.l, lines, "c.yaml", 1, launchers.BUILTIN)
  T.has(err, "c.yaml:4: launchers: box: unknown key 'colour'")
end)

T.test("a state file's launch and launcher fields are checked: a job name is a plain name, never a path", function()
  local runstate = require("raymond.runstate")
  local function with(agent_fields, launch_fields)
    local a = { id = "main", state = "START.sh", cwd = "/tmp", stack = {} }
    for k, v in pairs(agent_fields) do a[k] = v end
    local launch = { cwd = "/tmp" }
    for k, v in pairs(launch_fields or {}) do launch[k] = v end
    return raymond.json_encode({ format = 1, id = "r", workflow = "/tmp/wf", status = "running", launch = launch,
      steps = 0, agents = { a } })
  end
  local ok = runstate.decode(with({ launcher = "slurm", launch = { job = "ray-main-0badcafe", launcher = "gpu",
    state = "START.sh", cancel = { "scancel", "--name=ray-main-0badcafe" } } }, { launcher = "gpu",
    launchers = { gpu = { base = "slurm" } } }), "s.json")
  T.eq(ok.agents[1].launch.job, "ray-main-0badcafe")
  local bad, err = runstate.decode(with({ launch = { job = "../../etc", launcher = "slurm", state = "START.sh" } }),
    "s.json")
  T.eq(bad, nil)
  T.has(err, "agents[1].launch.job '../../etc' is not a job name raymond makes")
  bad, err = runstate.decode(with({ launcher = "a/b" }), "s.json")
  T.has(err, "agents[1].launcher 'a/b' is not a launcher name")
  bad, err = runstate.decode(with({ launch = { job = "j", launcher = "slurm", state = "../x.sh" } }), "s.json")
  T.has(err, "agents[1].launch.state")
  bad, err = runstate.decode(with({ launch = { job = "j", launcher = "slurm", state = "A.sh", cancel = { 1 } } }),
    "s.json")
  T.has(err, "agents[1].launch.cancel[1]")
end)

T.test("job names are ray-, the agent id as a DNS label's letters and cut to 40, and 8 hex digits", function()
  T.eq(launchers.job_name("main_Work1"):find("^ray%-main%-work1%-%x%x%x%x%x%x%x%x$") ~= nil, true)
  local long = launchers.job_name(string.rep("a", 60) .. "/x")
  T.eq(#long, 4 + 40 + 1 + 8)
  T.eq(launchers.job_name("a b/c.d"):find("^ray%-a%-b%-c%-d%-") ~= nil, true)
  T.eq(launchers.job_name("main_w1") ~= launchers.job_name("main_w1"), true, "two launches, two names")
end)

-- Hostile values: quotes, a newline, $(...), backquotes, a backslash.
local HOSTILE = "it's \"quoted\"\nsecond line $(touch pwned) `touch pwned2` \\ end"

local function sh(argv, input)
  return raymond.spawn({ argv = argv, input = input, capture = true })
end

local dir = raymond.mkdtemp("raymond-launchers-")
local work = dir .. "/work"
raymond.mkdir_p(work)
local env = { SECRET = HOSTILE, PLAIN = "x", ["NOT-A-NAME"] = "y", RAYMOND_PROCESS_GROUP = "local only" }
raymond.write_atomic(dir .. "/env", script.exports(env), "private")
raymond.write_atomic(dir .. "/in", "stdin " .. HOSTILE, "private")
local argv = { "sh", "-c", "printf '%s' \"$SECRET\" > secret; cat > stdin; echo out \"$1\"; echo err >&2; exit 7",
               "sh", "arg " .. HOSTILE }
raymond.write_atomic(dir .. "/task.sh", script.task(dir, work, argv, true), "private")
local ran = sh({ "sh", dir .. "/task.sh" })

T.test("task.sh runs the command in its directory with the env file's variables, byte for byte", function()
  T.eq(ran.exit, 7)
  T.eq(raymond.read_file(work .. "/secret"), HOSTILE)
  T.eq(raymond.read_file(work .. "/stdin"), "stdin " .. HOSTILE)
  T.eq(raymond.read_file(dir .. "/out"), "out arg " .. HOSTILE .. "\n")
  T.eq(raymond.read_file(dir .. "/err"), "err\n")
  T.eq(raymond.read_file(dir .. "/exit"), "7")
  T.eq(raymond.read_file(dir .. "/started"):match("^%S+ %d+ $") ~= nil, true, "HOST PID and no job id")
  T.eq(raymond.stat(work .. "/pwned"), nil, "nothing in a value ran")
  T.eq(raymond.stat(dir .. "/pwned2"), nil)
  local text = raymond.read_file(dir .. "/env")
  T.eq(text:find("NOT-A-NAME", 1, true), nil, "a name sh cannot export is left out")
  T.eq(text:find("RAYMOND_PROCESS_GROUP", 1, true), nil, "the local process group stays here")
end)

T.test("task.sh reports a missing directory or program in launch-error, with exit 125", function()
  local d2 = dir .. "/nodir"
  raymond.mkdir_p(d2)
  raymond.write_atomic(d2 .. "/env", "", "private")
  raymond.write_atomic(d2 .. "/task.sh", script.task(d2, dir .. "/missing", { "true" }, false), "private")
  T.eq(sh({ "sh", d2 .. "/task.sh" }).exit, 125)
  T.eq(raymond.read_file(d2 .. "/exit"), "125")
  T.has(raymond.read_file(d2 .. "/launch-error"), "working directory " .. dir .. "/missing does not exist on node ")
  local d3 = dir .. "/noprog"
  raymond.mkdir_p(d3)
  raymond.write_atomic(d3 .. "/env", "", "private")
  raymond.write_atomic(d3 .. "/task.sh", script.task(d3, work, { "no-such-program-here" }, false), "private")
  T.eq(sh({ "sh", d3 .. "/task.sh" }).exit, 125)
  T.has(raymond.read_file(d3 .. "/launch-error"), "no-such-program-here not found on node ")
  T.has(raymond.read_file(d3 .. "/launch-error"), "(PATH=")
end)

T.test("the stream script, fed to sh -s, runs the command with its variables and input and carries its exit", function()
  local s = script.stream(work, { SECRET = HOSTILE }, "ray-main-0000",
    { "sh", "-c", "printf '%s|%s|%s' \"$SECRET\" \"$RAYMOND_JOB\" \"$(cat)\"; exit 5" }, "in " .. HOSTILE)
  local res = sh({ "sh", "-s" }, s)
  T.eq(res.exit, 5)
  T.eq(res.stdout, HOSTILE .. "|ray-main-0000|in " .. HOSTILE)
  T.eq(raymond.stat(work .. "/pwned"), nil)
  res = sh({ "sh", "-s" }, script.stream(work, {}, "j", { "sh", "-c", "readlink /proc/self/fd/0" }))
  T.eq(res.stdout, "/dev/null\n", "no input: /dev/null, not the rest of the script")
  res = sh({ "sh", "-s" }, script.stream(dir .. "/missing", {}, "j", { "true" }))
  T.eq(res.exit, 125)
  T.has(res.stderr, "raymond-launch-error: working directory " .. dir .. "/missing does not exist on node ")
  res = sh({ "sh", "-s" }, script.stream(work, {}, "j", { "no-such-program-here" }))
  T.eq(res.exit, 125)
  T.has(res.stderr, "raymond-launch-error: no-such-program-here not found on node ")
end)

T.test("the follower's command line: the spool folder, the job, and each template counted", function()
  local l = launchers.resolve("slurm", { name = "slurm", cpus = "2" }, {})
  local c = { l = l, name = "ray-main-12345678", values = { job = "ray-main-12345678" },
              resources = l.module.resources(l) }
  local f = spool.follower(c, "/s/ray-main-12345678")
  T.eq(f[1], raymond.exe_path())
  T.same({ table.unpack(f, 2, 9) }, { "launch-follow", "/s/ray-main-12345678", "--name", "ray-main-12345678",
    "--check", "10", "--grace", "20" })
  T.same({ table.unpack(f, 10, 19) }, { "--submit", "9", "sbatch", "--parsable", "--job-name=ray-main-12345678",
    "--export=ALL", "--chdir=/s/ray-main-12345678", "--output=/s/ray-main-12345678/slurm.out",
    "--open-mode=append", "--cpus-per-task=2" })
  T.same({ table.unpack(f, 20, 21) }, { "/s/ray-main-12345678/task.sh", "--cancel" })
  T.same({ table.unpack(f, 22) }, { "2", "scancel", "--name=ray-main-12345678", "--status", "4", "squeue",
    "--noheader", "--name=ray-main-12345678", "--format=%i" })
end)

raymond.rmtree(dir)

-- A spool launch end to end, with a stand-in for `raymond launch-follow`
-- (src/cmd_follow.c has the real one): it submits unless the folder shows
-- a job, waits for the task's exit, replays its out and err, and ends
-- with its status.  The "cluster" is a submit: template that starts
-- task.sh in the background.
local top = raymond.mkdtemp("raymond-spool-")
local standin = top .. "/follow"
raymond.write_atomic(standin, [[
dir=$2; shift 2
while [ $# -gt 0 ]; do
  if [ "$1" = --submit ]; then
    n=$2; shift 2; : >"$dir/submit.argv"
    while [ "$n" -gt 0 ]; do printf '%s\0' "$1" >>"$dir/submit.argv"; shift; n=$((n - 1)); done
  else shift; fi
done
if [ ! -e "$dir/exit" ] && [ ! -e "$dir/job" ]; then
  if ! xargs -0 env <"$dir/submit.argv" >"$dir/job.tmp" 2>"$dir/submit.err"; then
    printf 'submit failed: %s' "$(cat "$dir/submit.err")" >"$dir/launch-error"; exit 125
  fi
  mv "$dir/job.tmp" "$dir/job"
fi
while [ ! -e "$dir/exit" ]; do sleep 0.02; done
cat "$dir/out"; cat "$dir/err" >&2
exit "$(cat "$dir/exit")"
]])
local defs = { tpl = { name = "tpl", submit = { "sh", "-c", "sh \"$0\" >/dev/null 2>&1 & echo 42", "{script}" },
                       status = { "true" }, cancel = { "true" } } }

local function spool_run(agents)
  return { ws = { root = top .. "/.raymond" }, rec = { id = "run1", launch = { launchers = defs }, agents = agents or {} },
           environ = { PATH = os.getenv("PATH") }, cwd = top }
end

-- One launch of `agent` at W.sh through tpl, its command counting its runs in `top`/count.
local function launch(run, agent)
  local argv = { "sh", "-c", "echo x >>count; printf 'said %s' \"$GREETING\"; echo warned >&2; exit 3" }
  return launchers.spawn(run, { script = { agent = agent, state = "W.sh" }, launcher = launchers.resolve("tpl", nil, defs),
    env = { GREETING = "hi 'there'" } }, { argv = argv, env = { GREETING = "hi 'there'" },
    cwd = top, capture = true })
end

-- The stand-in is run by sh: its path is the "command", and the rest of argv is the follower's.
spool.follower = (function(orig)
  return function(c, dir)
    local argv = orig(c, dir)
    argv[1] = "/bin/sh"
    table.insert(argv, 2, standin)
    return argv
  end
end)(spool.follower)

T.test("a spool launch: the folder is written, the job submitted and followed, its output and status returned", function()
  local agent = { id = "main" }
  local run = spool_run({ agent })
  local res = launch(run, agent)
  T.eq(res.exit, 3)
  T.eq(res.launcher, "tpl")
  T.eq(res.launch_error, nil)
  T.eq(agent.launch, nil, "cleared when the launch ended")
  T.eq(raymond.read_file(top .. "/count"), "x\n")
  local dir = run.spool_done.main
  T.eq(dir:find("^" .. top:gsub("%p", "%%%0") .. "/%.raymond/spool/run1/ray%-main%-%x+$") ~= nil, true, dir)
  T.eq(raymond.read_file(dir .. "/out"), "said hi 'there'")
  T.eq(raymond.read_file(dir .. "/job"), "42\n")
  T.eq(raymond.stat(dir .. "/in"), nil, "no input, no in file")
  T.eq(raymond.stat(dir), "dir", "kept until the outcome is saved")
  launch(run, agent)
  T.eq(raymond.stat(dir), nil, "removed at the agent's next launch")
  -- The agent ends; its folder goes at another agent's launch.
  dir = run.spool_done.main
  local other = { id = "other" }
  run.rec.agents = { other }
  launch(run, other)
  T.eq(raymond.stat(dir), nil, "an ended agent's folder goes at the next launch")
  T.eq(raymond.stat(run.spool_done.other), "dir")
  run.rec.status = "completed"
  launchers.finish(run)
  T.eq(raymond.stat(top .. "/.raymond/spool/run1"), nil, "the run's spool goes when it completes")
  os.remove(top .. "/count")
end)

-- A run killed during the launch of job `job` by agent main at W.sh:
-- the agent, the run and the launch's spool folder (made, empty).
local function killed_launch(job)
  local agent = { id = "main", launch = { job = job, launcher = "tpl", state = "W.sh" } }
  local dir = top .. "/.raymond/spool/run1/" .. job
  raymond.mkdir_p(dir)
  return agent, spool_run({ agent }), dir
end

T.test("a resume with agent.launch for its state attaches: a finished job's output is replayed, not run again", function()
  local agent, run, dir = killed_launch("ray-main-0badcafe")
  -- What the task left while raymond was down.
  raymond.write_atomic(dir .. "/task.sh", "exit 99\n")
  raymond.write_atomic(dir .. "/job", "41\n")
  raymond.write_atomic(dir .. "/out", "said before the crash")
  raymond.write_atomic(dir .. "/err", "")
  raymond.write_atomic(dir .. "/exit", "3")
  local res = launch(run, agent)
  T.eq(res.exit, 3)
  T.eq(res.stdout, "said before the crash")
  T.eq(raymond.stat(top .. "/count"), nil, "the command did not run again")
  T.eq(raymond.read_file(dir .. "/task.sh"), "exit 99\n", "the folder of a submitted launch is left as it is")
  T.eq(run.spool_done.main, dir)
  -- Another state's launch is not attached to: it gets a job of its own.
  agent.launch = { job = "ray-main-0badcafe", launcher = "tpl", state = "OTHER.sh" }
  res = launch(run, agent)
  T.eq(res.stdout, "said hi 'there'")
  T.eq(raymond.read_file(top .. "/count"), "x\n")
  os.remove(top .. "/count")
end)

T.test("a resume whose task never started writes the folder again: a file a power cut tore is not submitted", function()
  local agent, run, dir = killed_launch("ray-main-0badf00d")
  -- What a power cut may leave of files written without a sync.
  raymond.write_atomic(dir .. "/task.sh", "echo 99 >'" .. dir .. "/exit'\n")
  raymond.write_atomic(dir .. "/env", "")
  local res = launch(run, agent)
  T.eq(res.exit, 3)
  T.eq(res.stdout, "said hi 'there'")
  T.eq(raymond.read_file(top .. "/count"), "x\n", "the command ran once")
  os.remove(top .. "/count")
end)

T.test("a failed submit is the result's launch_error", function()
  local saved = defs.tpl.submit
  defs.tpl.submit = { "sh", "-c", "echo 'sbatch: error: invalid partition specified: gpux' >&2; exit 1" }
  local w1 = { id = "w1" }
  local res = launch(spool_run({ w1 }), w1)
  defs.tpl.submit = saved
  T.eq(res.exit, 125)
  T.eq(res.launch_error, "submit failed: sbatch: error: invalid partition specified: gpux")
end)

raymond.rmtree(top)
