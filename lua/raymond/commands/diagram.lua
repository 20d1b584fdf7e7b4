-- raymond.commands.diagram: `raymond diagram PATH [--html] [--output FILE]`:
-- the workflow's states and transitions as a Mermaid flowchart, or as a
-- self-contained HTML page that draws it, read without running anything.

local raymond = require("raymond")
local analyse = require("raymond.analyse")
local console = require("raymond.console")
local diagram = require("raymond.diagram")
local svg = require("raymond.svg")

local M = {}

M.usage = { "raymond diagram PATH [--html] [--output FILE]" }

M.args = {
  { key = "workflow", name = "PATH", missing = "no workflow given",
    hint = "raymond diagram PATH: a workflow folder, a .zip archive of one, or a state file" },
}

M.flags = {
  { "diagram options", "html", "output" },
}

M.help = [[
Draws the workflow at PATH (a folder, a .zip archive of one, a YAML
workflow, or a state file) without running it: a Mermaid flowchart (flowchart TD) of its states
and the transitions their tags, allowed_transitions and hook routes
(evaluate:, on_max_visits) can take.  Markdown states are boxes, scripts
hexagons; the entry state is marked, and <result> leads to an end node or
back to the state a <call> or <function> returns to.  With --html it writes
one HTML page that shows the drawing with no network access and no
JavaScript, with the Mermaid source below it.  See docs/diagram.md.]]

-- The name the drawing is titled with: the folder, archive or YAML file's.
local function title(wf)
  local name = (wf.path:match("([^/]+)/*$") or wf.path):gsub("%.[zZ][iI][pP]$", "")
  return (name:gsub("%.[yY][aA]?[mM][lL]$", ""))
end

local FOLDER_HINT = "--output names the file to write, in a folder that exists"

-- Write `text` into the file at `path`, opened as any tool opens its
-- output: a device or a FIFO (`--output /dev/stdout`) must stay what it
-- is, where a file renamed over it would take its place.
local function write_into(path, out, text)
  local fh, err = io.open(path, "wb")
  local ok = fh ~= nil
  if fh then
    ok, err = fh:write(text)
    local closed, cerr = fh:close()
    if ok then ok, err = closed, cerr end
  end
  if ok then return true end
  -- io's messages may start with the path: the reason is what follows.
  return nil, string.format("cannot write --output '%s': %s", out, err:match(".*: (.*)$") or err),
    "--output FILE writes into FILE; omit it to write to stdout"
end

-- Write `text` to `out` (relative to `cwd`).  A regular file, or none,
-- is replaced whole, so that a reader never sees half of it: a new file
-- renamed over the old one.  Anything else, a symlink included, is
-- written into: `/dev/stdout` may lead to a file the shell opened, and
-- replacing that file would lose what the shell's descriptor writes.
local function write(out, cwd, text)
  local path = out:sub(1, 1) == "/" and out or cwd .. "/" .. out
  local dir = path:match("^(.*)/[^/]*$")
  if raymond.stat(path) == "dir" then
    return nil, string.format("cannot write --output '%s': it is a folder", out), FOLDER_HINT
  end
  local kind = raymond.stat(path, true)
  if kind == "link" or kind == "other" then return write_into(path, out, text) end
  if dir ~= "" and raymond.stat(dir) ~= "dir" then
    return nil, string.format("cannot write --output '%s': folder '%s' does not exist", out, dir), FOLDER_HINT
  end
  local ok, err = raymond.write_atomic(path, text)
  if ok then return true end
  return nil, string.format("cannot write --output '%s': %s", out, err),
    "--output FILE is written as FILE.lock beside it, then renamed over it; omit --output to write to stdout"
end

-- `text` on stdout, or into --output FILE; the exit status.  Also
-- raymond convert's.
function M.output(opts, text)
  if not opts.output then
    raymond.stdout(text)
    return 0
  end
  local ok, werr, hint = write(opts.output, opts.cwd, text)
  if not ok then
    console.error(werr, nil, hint)
    return 1
  end
  return 0
end

function M.main(opts)
  local wf, err = analyse.load(opts.workflow, opts.cwd)
  if not wf then
    console.error(err.msg, nil, err.hint)
    return 1
  end
  if wf.entry_error then console.warn("%s; the drawing marks no entry state", wf.entry_error.msg) end
  local g = diagram.graph(wf)
  analyse.close(wf)
  local text = diagram.mermaid(g)
  if opts.html then text = svg.html(g, title(wf), text) end
  return M.output(opts, text)
end

return M
