-- raymond.launchers.slurm: a Slurm batch job per launch (spool kind,
-- raymond.launchers.spool).  The job runs SPOOL/task.sh, its working
-- directory the spool folder, and Slurm's own messages (time limit,
-- cancel) appended to SPOOL/slurm.out.  It is found, watched and
-- cancelled by its name, which raymond chooses and saves before the
-- submit, so a resume after a crash finds the job without knowing its id.
--
-- The environment.  sbatch runs with only the few variables of
-- M.follower_env (and Slurm's own), and passes them on (--export=ALL);
-- the task then sources the spool's env file, which holds what a local
-- child would get.  --export=NONE would look cleaner but is not: Slurm
-- then gives the job the user's login environment, made by a login shell
-- that slurmd runs for every job, which delayed the starts of 50 jobs on
-- a busy node by minutes (docs/cluster-testing.md).

local M = {
  name = "slurm", kind = "spool",
  submit = { "sbatch", "--parsable", "--job-name={job}", "--export=ALL", "--chdir={spool}",
             "--output={spool}/slurm.out", "--open-mode=append", "{resources}", "{script}" },
  status = { "squeue", "--noheader", "--name={job}", "--format=%i" },
  cancel = { "scancel", "--name={job}" },
}

-- What sbatch and the job start with: these of raymond's variables, and
-- every SLURM_* one (SLURM_CONF names the cluster).
local KEEP = { PATH = true, HOME = true, USER = true, LOGNAME = true, LANG = true, LC_ALL = true,
               TZ = true, TMPDIR = true, RAYMOND_PROCESS_GROUP = true }

function M.follower_env(env)
  local out = {}
  for k, v in pairs(env) do
    if KEEP[k] or k:match("^SLURM_") then out[k] = v end
  end
  return out
end

-- The sbatch options for the resources `r` asks for, only those given,
-- then its `args`.
function M.resources(r)
  local out = {}
  local function add(fmt, v) if v ~= nil and v ~= "" then out[#out + 1] = string.format(fmt, v) end end
  add("--partition=%s", r.partition)
  add("--cpus-per-task=%s", r.cpus)
  add("--mem=%s", r.mem)
  add("--time=%s", r.time)
  add("--gres=gpu:%s", r.gpus)
  for _, a in ipairs(r.args or {}) do out[#out + 1] = a end
  return out
end

return M
