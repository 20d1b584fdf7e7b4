-- raymond.commands.resume: `raymond resume ID [options]`, and the old
-- `raymond --resume ID`: continue a run from its state file.
--
-- main(opts) hands the options to the engine, which starts the agents
-- again and returns while they work; finish() is the engine's.

local cli = require("raymond.cli")

local M = {}

M.usage = { "raymond resume ID [options]" }

M.args = {
  { key = "resume", name = "ID", missing = "no run id given",
    hint = "raymond resume ID; list runs with: raymond list" },
}

M.flags = {
  { "resume options", "input", "on-ask", "timeout", "max-parallel", "max-agents", "allow-cd" },
  cli.groups.markdown,
  cli.groups.hooks,
  cli.groups.output,
  cli.groups.config,
}

M.help = [[
Continues the run ID after a failure, a stop or a kill: the states that
were running run again, and nothing that completed.  Options given now win
over the ones the run was launched with, and are kept for the next resume;
the states keep their own input.  Config files do not change a run's
launch options: only their quiet setting and their launchers: (the
definitions, docs/cluster.md) are read again.

A run waiting for answers (--on-ask pause) is answered with --input TEXT,
which answers the oldest pending <ask> (raymond answer ID ASK_ID TEXT
answers another); the answer is saved before anything runs, and the run
goes on.  An ask whose timeout has passed takes its timeout_next instead.
Without --input the asks stay pending while the other agents go on.

Only one raymond drives a run: it holds the run's lease (.raymond/state/
ID.lock, its host and pid, renewed while it runs), so .raymond may be on
storage several machines share.  A resume is refused while another
process's lease is live: on its own host until that process ends, on
another host until the lease expires (RAYMOND_LEASE_SECONDS, default 30,
after a kill -9).  RAYMOND_HOST names this host in leases instead of its
host name.

exit status: 0 completed, 1 error, 2 waiting for answers, 3 stopped
resumably, 130 interrupted]]

function M.main(opts)
  -- A run goes on with the options it was launched with (rec.launch), so
  -- a config file edited since cannot change its budget or its hooks.
  -- Its launchers: are read again, so a launcher a state failed to find
  -- can be defined, and the run resumed (docs/cluster.md).
  local from, cerr = require("raymond.config").settle(opts, { quiet = true, launchers = true })
  if not from then
    require("raymond.console").error(cerr.msg, nil, cerr.hint)
    return 1
  end
  local run, err = require("raymond.engine").resume(opts)
  if run then
    require("raymond.live").title(run.rec.launch.name)
    return nil, run
  end
  require("raymond.console").error(err.msg, err.detail, err.hint)
  return 1
end

function M.finish(run, crashed, signo)
  return require("raymond.engine").finish(run, crashed, signo)
end

return M
