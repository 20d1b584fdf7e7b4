-- raymond.console: what a person watching the run reads.
--
-- Progress and errors go to stderr, so stdout carries only the workflow's
-- own output: <print> text as it arrives, and the final <result> of the
-- main agent.  --quiet silences progress; errors and warnings always show.
--
-- Much of what is shown comes from a model or a child (its text, the
-- names it chose, the output an error quotes), so everything written to
-- stderr has its control characters shown rather than obeyed
-- (raymond.printable, src/termsafe.h).  The result on stdout is shown so
-- on a terminal, and kept byte for byte when stdout is a pipe or a file:
-- there it is data for a program (`$(raymond wf)`), which must get the
-- payload exactly.
--
-- On a terminal (stdout and stderr both), the live view (raymond.live)
-- keeps a block at the bottom of the screen; everything written here then
-- scrolls above it.  <print> lines of forked agents are prefixed with the
-- agent's id ("[main_w1] text") whenever stdout is a terminal; on a pipe
-- or in a file they are the workflow's output and stay as printed.

local raymond = require("raymond")
local live = require("raymond.live")

local M = { quiet = false }

-- Write to stderr, untrusted text made safe to show.
local function say(text)
  if M.view then M.view:above(raymond.printable(text)) return end
  raymond.stderr(raymond.printable(text))
end
M.say = say

-- Start the live view of `run` when it is wanted (raymond.live).
function M.open_view(run)
  if live.wanted(M.quiet) then M.view = live.open(run) end
end

-- End it: the terminal is left as an ordinary one, before the result.
function M.close_view()
  if M.view then M.view:close() end
  M.view = nil
end

local function rel(path, cwd)
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end
M.rel = rel

function M.progress(fmt, ...)
  if M.quiet then return end
  say(string.format(fmt, ...) .. "\n")
end

function M.warn(fmt, ...)
  say("raymond: warning: " .. string.format(fmt, ...) .. "\n")
end

-- An error: one line saying what and where, then indented detail lines,
-- then a hint saying how to fix it.
function M.error(msg, detail, hint)
  local out = { "raymond: error: " .. msg }
  if detail and detail ~= "" then
    for line in detail:gmatch("[^\n]+") do out[#out + 1] = "  | " .. line end
  end
  if hint then out[#out + 1] = "hint: " .. hint end
  say(table.concat(out, "\n") .. "\n")
end

-- The last `n` non-empty lines of `text`.
function M.tail(text, n)
  local lines = {}
  for line in (text or ""):gmatch("[^\n]+") do
    lines[#lines + 1] = line
    if #lines > n then table.remove(lines, 1) end
  end
  return table.concat(lines, "\n")
end

-- One <print> line of agent `id`, already safe to show, on a terminal.
function M.print_line(id, line)
  if id ~= "main" then line = "[" .. id .. "] " .. line end
  if M.view then M.view:print(line) return end
  raymond.stdout(line .. "\n")
end

-- What a state's raymond.spawn gets as `prints` for agent `id`: on a
-- terminal each <print> line comes here; elsewhere nil, and the text
-- goes to stdout as it arrives.
function M.prints(id)
  if not raymond.isatty("stdout") then return nil end
  return function(line) M.print_line(id, line) end
end

-- <print> text of a reply as raymond.parse_tags returns it: already made
-- safe to show and ended by a newline per print, as a script's is.
function M.print(text, id)
  if text == "" then return end
  if not raymond.isatty("stdout") then raymond.stdout(text) return end
  for line in text:gmatch("([^\n]*)\n") do M.print_line(id or "main", line) end
end

-- A line of what agent `id` is doing (a model's text, a tool call): cut
-- to the terminal's width under the live view, whole in a log.
function M.activity(id, text)
  if M.quiet then return end
  local line = "[" .. id .. "] " .. raymond.printable(text)
  if M.view then
    M.view:above(live.cut(line, live.width() - 1) .. "\n")
    return
  end
  raymond.stderr(line .. "\n")
end

function M.result(payload)
  if payload == nil or payload == "" then return end
  if raymond.isatty("stdout") then payload = raymond.printable(payload) end
  raymond.stdout(payload:sub(-1) == "\n" and payload or payload .. "\n")
end

return M
