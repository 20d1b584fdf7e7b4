-- raymond.launchers.slurm: a Slurm batch job per launch (spool kind,
-- raymond.launchers.spool).  The job runs SPOOL/task.sh with no
-- environment of the submitter's (--export=NONE: the task sources the
-- spool's env file instead), its working directory the spool folder, and
-- Slurm's own messages (time limit, cancel) appended to SPOOL/slurm.out.
-- It is found, watched and cancelled by its name, which raymond chooses
-- and saves before the submit, so a resume after a crash finds the job
-- without knowing its id.

local M = {
  name = "slurm", kind = "spool",
  submit = { "sbatch", "--parsable", "--job-name={job}", "--export=NONE", "--chdir={spool}",
             "--output={spool}/slurm.out", "--open-mode=append", "{resources}", "{script}" },
  status = { "squeue", "--noheader", "--name={job}", "--format=%i" },
  cancel = { "scancel", "--name={job}" },
}

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
