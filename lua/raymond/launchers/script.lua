-- raymond.launchers.script: the shell text a launch runs on the other
-- side: the env file and task.sh of a spool folder (raymond.launchers.spool)
-- and the script a stream launcher feeds to a remote `sh -s`
-- (raymond.launchers.stream).  Everything is POSIX sh, every value
-- single-quoted (raymond.text's sh_quote), so a variable's value, the command's
-- arguments and its input arrive byte for byte whatever they hold:
-- quotes, newlines, $(...).

local template = require("raymond.launchers.template")

local M = {}

local q = require("raymond.text").sh_quote

-- What no launch passes on: the file of raymond's own process group,
-- which means nothing on another machine.
local NOT_PASSED = { RAYMOND_PROCESS_GROUP = true }

-- The export lines of environment `env` (name -> value), sorted.  A name
-- sh cannot export (it holds '-' or '.') is left out.
function M.exports(env)
  local names = {}
  for k in pairs(env) do
    if not NOT_PASSED[k] and k:find("^[A-Za-z_][A-Za-z0-9_]*$") then names[#names + 1] = k end
  end
  table.sort(names)
  local lines = {}
  for i, k in ipairs(names) do lines[i] = "export " .. k .. "=" .. q(env[k]) .. "\n" end
  return table.concat(lines)
end

-- task.sh of spool folder `dir` (see docs/cluster.md, "The spool
-- protocol"): marks itself started, checks the working directory and
-- the program, runs the command with the spool's files as its stdin,
-- stdout and stderr, and writes its exit status.  Each mark is written
-- to a temporary file and renamed, so a reader never sees half of one.
function M.task(dir, cwd, argv, has_input)
  local d = q(dir)
  return table.concat({
    "#!/bin/sh",
    "# A step of a raymond run, written by raymond; the files beside it are its spool folder.",
    "umask 077",
    "raymond_put() { printf '%s' \"$2\" > " .. d .. "/\"$1\".tmp && mv -f " .. d .. "/\"$1\".tmp " .. d
      .. "/\"$1\"; }",
    "raymond_host=$(uname -n 2>/dev/null)",
    "raymond_put started \"$raymond_host $$ ${SLURM_JOB_ID:-}\"",
    "if ! cd -- " .. q(cwd) .. " 2>/dev/null; then",
    "  raymond_put launch-error \"$(printf 'working directory %s does not exist on node %s' " .. q(cwd)
      .. " \"$raymond_host\")\"",
    "  raymond_put exit 125",
    "  exit 125",
    "fi",
    ". " .. d .. "/env",
    "if ! command -v " .. q(argv[1]) .. " >/dev/null 2>&1; then",
    "  raymond_put launch-error \"$(printf '%s not found on node %s (PATH=%s)' " .. q(argv[1])
      .. " \"$raymond_host\" \"$PATH\")\"",
    "  raymond_put exit 125",
    "  exit 125",
    "fi",
    -- A handler rather than '': the command's processes get the default
    -- dispositions back, so a cancel's TERM ends them, and the shell
    -- lives on to write their status.
    "trap 'raymond_got=1' TERM INT HUP",
    template.command(argv) .. " < " .. (has_input and (d .. "/in") or "/dev/null") .. " > " .. d .. "/out 2> "
      .. d .. "/err",
    "raymond_s=$?",
    "raymond_put exit \"$raymond_s\"",
    "exit \"$raymond_s\"",
    "",
  }, "\n")
end

-- The script a stream launch writes to the remote shell's stdin: the
-- same checks as task.sh, reported as one line on stderr
-- (raymond-launch-error: TEXT) and exit status 125, then the exports and
-- the command, its input given by printf.  The command runs in the
-- background of the shell that waits for it, so a cancel's TERM to the
-- shell (found by the job name on its command line) is passed on.
function M.stream(cwd, env, job, argv, input)
  local run = template.command(argv)
  if input and input ~= "" then
    run = "printf '%s' " .. q(input) .. " | " .. run
  else
    run = run .. " </dev/null"
  end
  return table.concat({
    "umask 077",
    "if ! cd -- " .. q(cwd) .. " 2>/dev/null; then",
    "  printf 'raymond-launch-error: working directory %s does not exist on node %s\\n' " .. q(cwd)
      .. " \"$(uname -n 2>/dev/null)\" >&2",
    "  exit 125",
    "fi",
    M.exports(env) .. "export RAYMOND_JOB=" .. q(job),
    "if ! command -v " .. q(argv[1]) .. " >/dev/null 2>&1; then",
    "  printf 'raymond-launch-error: %s not found on node %s (PATH=%s)\\n' " .. q(argv[1])
      .. " \"$(uname -n 2>/dev/null)\" \"$PATH\" >&2",
    "  exit 125",
    "fi",
    run .. " &",
    "raymond_pid=$!",
    "trap 'kill -TERM \"$raymond_pid\" 2>/dev/null' TERM INT HUP",
    "while :; do",
    "  wait \"$raymond_pid\"",
    "  raymond_s=$?",
    "  kill -0 \"$raymond_pid\" 2>/dev/null || break",
    "done",
    "exit \"$raymond_s\"",
    "",
  }, "\n")
end

return M
