-- raymond.commands.answer: `raymond answer ID ASK_ID TEXT [options]`:
-- answer one pending <ask> of run ID and continue the run, as
-- `raymond resume ID --input TEXT` does for the oldest (raymond.ask).

local cli = require("raymond.cli")
local resume = require("raymond.commands.resume")

local M = {}

M.usage = { "raymond answer ID ASK_ID TEXT [options]" }

M.args = {
  { key = "resume", name = "ID", missing = "no run id given",
    hint = "raymond answer ID ASK_ID TEXT; list runs with: raymond list" },
  { key = "ask_id", name = "ASK_ID", missing = "no ask id given",
    hint = "raymond status ID shows the pending asks with their ids" },
  { key = "input", name = "TEXT", missing = "no answer given",
    hint = "raymond answer ID ASK_ID TEXT (quote TEXT that has spaces)" },
}
M.extra_hint = "quote TEXT that has spaces"

M.flags = {
  { "resume options", "on-ask", "timeout", "max-parallel", "max-agents", "allow-cd" },
  cli.groups.markdown,
  cli.groups.hooks,
  cli.groups.output,
  cli.groups.config,
}

M.help = [[
Answers the pending <ask> ASK_ID of run ID with TEXT and continues the
run, as raymond resume ID does: the agent goes on at the ask's next state
with TEXT as its input ({{input}}, $RAYMOND_INPUT).  The answer is saved
before anything runs; the other pending asks stay pending.  An ask id
the run does not have is an error that lists the pending ones, and
changes nothing.  An ask whose timeout has passed may still be answered
when it has no timeout_next.

exit status: 0 completed, 1 error, 2 waiting for more answers, 3 stopped
resumably, 130 interrupted]]

M.main = resume.main
M.finish = resume.finish

return M
