-- raymond.commands.hook_bridge: `raymond hook-bridge [--warn] [--timeout S]`.
-- The C side answers every `raymond hook-bridge ...` itself, without
-- starting Lua (src/cmd_bridge.c), since the Claude Code CLI runs it for
-- every tool call; this module gives the command its line in
-- `raymond help` and its help text.  Should a command line ever reach
-- main here, it denies, as the C side does when it cannot answer.

local raymond = require("raymond")

local M = {}

M.usage = { "raymond hook-bridge [--warn] [--timeout S]" }

M.help = [[
Run by the Claude Code CLI, not by hand: raymond installs it as the
command hook of a markdown state's turn when a hook file wants that
turn's tool events.  It reads the event on stdin, hands it to the
raymond that runs the turn through the socket RAYMOND_BRIDGE with the
turn's secret RAYMOND_BRIDGE_TOKEN, waits at most S seconds, and relays
the decision: on stdout with exit status 0, or on stderr with exit
status 2.  Anything that goes wrong denies the tool call (exit status 2)
with one line on stderr; with --warn it allows it (exit status 0).]]

function M.main()
  raymond.stderr("raymond hook-bridge: not answered by this build; the tool call is denied\n")
  return 2
end

return M
