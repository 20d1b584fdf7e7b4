-- raymond.analyse: a static model of a workflow, read without running it.
--
--   local wf, err = analyse.load(path, cwd [, opts])
--
-- `path` (relative to `cwd`, or absolute) is a workflow folder, a .zip
-- archive of one (opened through raymond.scope, so its layout, hash and
-- size caps are checked as a run checks them), a YAML workflow
-- (FILE.yaml, or FILE.yaml/STATE which is then its entry), or one state
-- file, whose folder is the workflow and which is then its entry.  `opts`
-- may hold `hooks` (extra hook files, absolute) and `no_default_hooks`, as
-- a run has them.  On failure: nil and { msg =, hint = }, as the engine's errors.
-- A folder holding no state file at all is not a workflow.
--
-- The model:
--   wf.path        the folder, archive or YAML file, absolute
--   wf.kind        "dir", "zip" or "yaml"
--   wf.scope       its raymond.scope (close it with analyse.close(wf))
--   wf.entry       the entry state's file name ("1_START.md"), or nil
--   wf.entry_error { check = "no-entry-point" | "ambiguous-entry-point",
--                    msg = } when there is no single entry
--   wf.states      the state files, sorted by name (see below)
--   wf.by_name     state file name -> state
--   wf.hooks       { set = (raymond.hooks set, or nil), error = { file =,
--                    msg = } or nil, warnings = { {file=, msg=} },
--                    frontmatter = the fields the hooks read (the
--                    default hooks' when the files do not load),
--                    files = { {name=, source=, own=} } }: the hook
--                    files, loaded within the hook limits; `own` marks
--                    the workflow's own files and --hooks files
--   wf.fm_types    frontmatter field -> type, raymond's and the hooks'
--
-- A state:
--   name         the file name, as raymond names states ("START.md")
--   kind         "markdown" or "script"
--   source       the file's text (nil and read_error = msg if unreadable)
--   line_of(pos) the line of byte `pos` of source
--   frontmatter  the parsed table (markdown; nil when it does not parse,
--                and fm_error holds the parser's message)
--   fm_line(key) the line of top-level frontmatter key `key`, or nil
--   body, body_pos  the text after the frontmatter and where it starts
--   tags         every transition tag written in the text: { name =,
--                attrs = {}, body =, line = } (a script's tags as they
--                appear in it, `\"` read as `"`)
--   edges        where the state may lead, see below
--   dynamic      true when a tag's state name is computed at run time
--                (a script's $VAR, a prompt's {{placeholder}})
--
-- An edge:
--   tag      "goto", "reset", "call", "function", "fork", "result",
--            "ask", or one of the -workflow tags, whose edge has
--            `workflow` (the other workflow's absolute path) and `entry`
--            instead of a target (or `error` when the path leads nowhere)
--   target   the state file it names, resolved as the run resolves it;
--            nil for result, for a name that does not resolve (then
--            `error` holds resolve's message and `raw` the name as
--            written) or for a computed name (`dynamic` = true)
--   ret      the return state of call/function (raw_ret, ret_error)
--   next     the parent's continuation of fork, or where an <ask>'s
--            answer goes (raw_next, next_error)
--   join     the summary state of a fork's join (raw_join, join_error)
--   timeout_next  where an <ask> goes when its timeout passes
--            (raw_timeout_next, timeout_next_error)
--   line     the line it is written on
--   via      "tag": written in the text or in allowed_transitions;
--            "hook": a default hook's frontmatter route (on_max_visits,
--            evaluate's routes and default)
--   label    short text for a diagram, or nil (a fixed result payload,
--            "max_visits 3", an evaluate answer)
--   from     "body", "allowed_transitions", "on_max_visits" or "evaluate"
--
-- Edges are deduplicated: the same tag, target, return, next and via from
-- one state appear once, at their first line.

local raymond = require("raymond")
local hooks = require("raymond.hooks")
local policy = require("raymond.policy")
local resolve = require("raymond.resolve")
local scope_of = require("raymond.scope")
local states = require("raymond.states")
local tags = require("raymond.tags")
local text = require("raymond.text")
local xworkflow = require("raymond.xworkflow")

local M = {}

local trim = text.trim

-- ----------------------------------------------------------------- lines

-- A function giving the line of a byte offset in `s`, the line starts
-- found once.
local function line_index(s)
  local starts
  return function(pos)
    if not starts then
      starts = { 1 }
      local p = s:find("\n", 1, true)
      while p do
        starts[#starts + 1] = p + 1
        p = s:find("\n", p + 1, true)
      end
    end
    local lo, hi = 1, #starts
    while lo < hi do
      local mid = (lo + hi + 1) // 2
      if starts[mid] <= pos then lo = mid else hi = mid - 1 end
    end
    return lo
  end
end

-- ------------------------------------------------------------------ tags

-- The transition tags raymond runs, by name.
local TAG = tags.by_name

-- The next opening of a transition tag in `s` from byte `pos`: its start
-- and name.  Found by a plain search for "<", which is far cheaper than a
-- pattern tried at every byte.
local function next_open(s, pos)
  while true do
    local start = s:find("<", pos, true)
    if not start then return nil end
    local name = s:match("^(%a[%a%-]*)[%s>]", start + 1)
    if name and TAG[name] then return start, name end
    pos = start + 1
  end
end

local function parse_attrs(s)
  local attrs = {}
  if s == "" then return attrs end
  for k, _, v in s:gmatch("([%a_][%w_]*)=([\"'])(.-)%2") do
    if attrs[k] == nil then attrs[k] = v end
  end
  return attrs
end

-- Whether a tag's body holds the opening of another transition tag, or
-- a line break where tags are written one to a line: then the first
-- opening was prose ("end with a <goto> tag: <goto>NEXT</goto>").
local function opens_tag(body, one_line)
  if one_line and body:find("\n", 1, true) then return true end
  return next_open(body, 1) ~= nil
end

-- Every transition tag written in `s` from byte `pos` on, with its line:
-- `<NAME ATTRS>BODY</NAME>` as raymond's tag parser reads it (an opening
-- tag never closed is prose).  A script's tags are echoed one to a line
-- (`one_line`), and read with `\"` as `"`, as echo prints them.
local function scan_tags(s, pos, line_of, one_line)
  local found = {}
  while true do
    local start, name = next_open(s, pos)
    if not start then break end
    pos = start + 1
    local close = s:find(">", start + #name + 1, true)
    if close then
      local attr_text = s:sub(start + #name + 1, close - 1)
      local body_end, after = s:find("</" .. name .. ">", close + 1, true)
      if body_end and not opens_tag(s:sub(close + 1, body_end - 1), one_line) then
        if one_line then attr_text = attr_text:gsub("\\([\"'])", "%1") end
        found[#found + 1] = { name = name, attrs = parse_attrs(attr_text),
          body = s:sub(close + 1, body_end - 1), line = line_of(start) }
        pos = after + 1
      end
    end
  end
  return found
end

-- Whether a name written in a tag is computed when the state runs: a
-- shell expansion, escape or printf format in a script, a placeholder in
-- a prompt.
local function computed(name, script)
  if script and name:find("[$`\\%%]") then return true end
  return name:find("{{", 1, true) ~= nil
end

-- ----------------------------------------------------------------- edges

-- A scope that answers has() from the list of files read once, so
-- resolving a thousand names costs no system call.
local function listed_scope(path, files)
  return { path = path, has = function(_, name) return files[name] == true end }
end

-- Resolve `raw` (a name as written, in a script when `script`) into edge
-- fields `key`, `raw_key`, `key_error`.
local function resolve_into(wf, edge, key, raw, script)
  if raw == nil then return end
  raw = trim(raw)
  edge["raw_" .. key] = raw
  if computed(raw, script) then
    edge.dynamic = true
    return
  end
  -- A workflow names the same states again and again: each is resolved once.
  local r = wf.resolved[raw]
  if not r then
    r = table.pack(resolve.target(wf.lookup, raw))
    wf.resolved[raw] = r
  end
  edge[key] = r[1]
  edge[key .. "_error"] = r[2]
end

-- The edge of a tag whose body is another workflow's path
-- (raymond.xworkflow): `workflow` (absolute) and `entry`, or `error` as
-- a run would report it; no `target`, which names states of this one.
local function other_workflow(wf, e, raw, script)
  raw = trim(raw)
  e.raw_target, e.raw = raw, raw
  if computed(raw, script) then
    e.dynamic = true
    return
  end
  local where, err = xworkflow.locate(wf.scope, raw)
  if not where then
    e.error = err
    return
  end
  e.workflow, e.entry = where.workflow, where.entry
end

local function add_edge(wf, st, e)
  local key = table.concat({ e.tag, e.raw_target or e.target or "", e.raw_ret or "", e.raw_next or "",
    e.raw_timeout_next or "", e.via, e.label or "", e.raw_join or "" }, "\0")
  if st.seen[key] then return end
  st.seen[key] = true
  if e.dynamic then st.dynamic = true end
  st.edges[#st.edges + 1] = e
end

-- The edge of one tag (written in the text, or an allowed_transitions
-- entry shaped as a tag).
local function tag_edge(wf, t, line, from, script)
  local e = { tag = t.name, line = line, via = "tag", from = from }
  if t.name == "result" then
    local payload = t.body and trim(t.body)
    if payload and payload ~= "" and #payload <= 40 and not payload:find("\n") then e.label = payload end
    return e
  end
  -- An <ask>'s body is its question; where it leads are its attributes.
  if t.body ~= nil and TAG[t.name].body == "workflow" then
    other_workflow(wf, e, t.body, script)
  elseif t.body ~= nil and TAG[t.name].body == "target" then
    resolve_into(wf, e, "target", t.body, script)
    e.raw = e.raw_target
    e.error = e.target_error
  end
  resolve_into(wf, e, "ret", t.attrs["return"], script)
  resolve_into(wf, e, "next", t.attrs.next, script)
  resolve_into(wf, e, "timeout_next", t.attrs.timeout_next, script)
  resolve_into(wf, e, "join", t.attrs.join, script)
  -- Drawn on the edge: the agent it leads to works in a git worktree.
  if t.name == "fork" or t.name == "reset" then e.worktree = t.attrs.worktree end
  return e
end

-- The line of the first occurrence of `needle` in the frontmatter from
-- line `from_line` on, else `from_line`.
local function fm_find(st, needle, from_line)
  if not needle or not st.fm_text then return from_line end
  local pos = st.fm_text:find(needle, 1, true)
  while pos do
    local line = st.line_of(pos)
    if not from_line or line >= from_line then return line end
    pos = st.fm_text:find(needle, pos + 1, true)
  end
  return from_line
end

local function scalars(entry)
  for _, v in pairs(entry) do
    if type(v) == "table" then return false end
  end
  return true
end

local function allowed_edges(wf, st, list)
  local key_line = st.fm_line("allowed_transitions")
  local last = key_line
  for _, entry in ipairs(list) do
    -- An entry holding a list or mapping is left out: raymond.policy
    -- refuses it, and the lint reports that (invalid-frontmatter).
    if type(entry) == "table" and type(entry.tag) == "string" and TAG[entry.tag] and scalars(entry) then
      local attrs = {}
      for k, v in pairs(entry) do
        if k ~= "tag" and k ~= "target" and k ~= "payload" then attrs[k] = tostring(v) end
      end
      local body = entry.tag == "result" and entry.payload or entry.target
      local t = { name = entry.tag, attrs = attrs, body = body ~= nil and tostring(body) or nil }
      last = fm_find(st, t.body or entry.tag, last) or last
      add_edge(wf, st, tag_edge(wf, t, last, "allowed_transitions"))
    end
  end
end

local function hook_edge(wf, st, raw, line, label, from)
  if type(raw) ~= "string" or raw == "" then return end
  local e = { tag = "goto", line = line, via = "hook", label = label, from = from }
  resolve_into(wf, e, "target", raw)
  e.raw, e.error = e.raw_target, e.target_error
  add_edge(wf, st, e)
end

-- The routes the default hooks take from frontmatter (hooks/visits.lua,
-- hooks/evaluate.lua), when those hooks are loaded.
local function hook_edges(wf, st, fm)
  if wf.no_default_hooks then return end
  if type(fm.max_visits) == "number" then
    hook_edge(wf, st, fm.on_max_visits, fm_find(st, "on_max_visits", nil),
      string.format("max_visits %g", fm.max_visits), "on_max_visits")
  end
  local ev = fm.evaluate
  if type(ev) ~= "table" then return end
  local line = st.fm_line("evaluate")
  if type(ev.routes) == "table" then
    local keys = {}
    for k in pairs(ev.routes) do keys[#keys + 1] = k end
    table.sort(keys, function(a, b) return tostring(a) < tostring(b) end)
    for _, k in ipairs(keys) do
      hook_edge(wf, st, ev.routes[k], fm_find(st, tostring(ev.routes[k]), line), tostring(k), "evaluate")
    end
  end
  hook_edge(wf, st, ev.default, fm_find(st, "default", line), "default", "evaluate")
end

-- ---------------------------------------------------------------- states

local function read_state(wf, name)
  local kind = states.of(name).name
  local st = { name = name, kind = kind, edges = {}, seen = {}, tags = {} }
  local source, err = wf.scope:read(name)
  if not source then
    st.read_error = err
    st.line_of = function() return 1 end
    st.fm_line = function() return nil end
    return st
  end
  st.source = source
  st.line_of = line_index(source)
  st.fm_line = function() return nil end
  if kind == "script" then
    st.body, st.body_pos = source, 1
    st.tags = scan_tags(source, 1, st.line_of, true)
  else
    local meta, body = raymond.frontmatter(source, wf.fm_types)
    if meta then
      st.frontmatter, st.body = meta, body
    else
      st.fm_error = body
      -- The body still shows its tags: a frontmatter block ends at the
      -- second line that is '---', or there is none.
      local close = source:find("\n%-%-%-[ \t]*\r?\n")
      st.body = (source:sub(1, 4) == "---\n" and close) and source:sub(close + 5) or source
    end
    st.body_pos = #source - #st.body + 1
    if st.body_pos > 1 then
      st.fm_text = source:sub(1, st.body_pos - 1)
      local fm_text, lines = st.fm_text, {}
      st.fm_line = function(key)
        if lines[key] == nil then
          local pos = fm_text:find("\n" .. tostring(key):gsub("%p", "%%%0") .. "%s*:")
          lines[key] = pos and st.line_of(pos + 1) or false
        end
        return lines[key] or nil
      end
    end
    st.tags = scan_tags(source, st.body_pos, st.line_of)
  end
  return st
end

-- The body tags of `st` with their fork attribute `next` and so on made
-- into edges, then its frontmatter's.
local function build_edges(wf, st)
  for _, t in ipairs(st.tags) do add_edge(wf, st, tag_edge(wf, t, t.line, "body", st.kind == "script")) end
  local fm = st.frontmatter
  if not fm then return end
  if type(fm.allowed_transitions) == "table" then allowed_edges(wf, st, fm.allowed_transitions) end
  hook_edges(wf, st, fm)
end

-- ----------------------------------------------------------------- hooks

-- The frontmatter fields the default hooks read, for a workflow whose own
-- hook files do not load: its states are still read as a run with working
-- hooks would read them.
local function default_fields(opts)
  if opts.no_default_hooks then return {} end
  local files = {}
  for name, source in pairs(raymond.embedded("hooks/")) do files[#files + 1] = { name = name, source = source } end
  local set = hooks.load(files, nil, function() end)
  return set and set.frontmatter or {}
end

-- The hook files a run of this workflow would load, loaded the same way
-- (raymond.hooks, within its limits), without a run behind them.
local function load_hooks(wf, opts)
  local info = { warnings = {}, files = {} }
  wf.hooks = info
  local files, err = hooks.discover(wf.scope, { no_default_hooks = opts.no_default_hooks, hooks = opts.hooks })
  if not files then
    info.error = { file = wf.path, msg = err }
    info.frontmatter = default_fields(opts)
    return
  end
  local defaults = opts.no_default_hooks and {} or raymond.embedded("hooks/")
  for _, f in ipairs(files) do
    info.files[#info.files + 1] = { name = f.name, source = f.source, own = defaults[f.name] == nil }
  end
  local set, herr, hfile = hooks.load(files, nil, function(file, msg)
    info.warnings[#info.warnings + 1] = { file = file, msg = msg }
  end)
  if not set then
    info.error = { file = hfile, msg = herr }
    info.frontmatter = default_fields(opts)
    return
  end
  info.set, info.frontmatter = set, set.frontmatter
end

-- ------------------------------------------------------------------ load

local function not_workflow(path, why)
  return nil, { msg = string.format("'%s' is not a workflow: %s", path, why),
    hint = "give a workflow folder (with 1_START or START, .md or .sh), a .zip archive of one, or a state file" }
end

-- The scope of `path` and the entry a state file names.
local function open_scope(path, abs)
  local fscope, fentry = resolve.file(abs)
  if fscope then return fscope, fentry end
  if fentry then return nil, { msg = fentry } end
  local kind = raymond.stat(abs)
  if kind == nil then return nil, { msg = string.format("workflow '%s' does not exist", path) } end
  local real, err = raymond.realpath(abs)
  if not real then return nil, { msg = err } end
  if kind == "dir" then return scope_of.dir(real) end
  if kind == "file" and scope_of.is_zip(real) then
    local scope, zerr = scope_of.zip(real)
    if not scope then return nil, { msg = zerr } end
    return scope
  end
  local dir, base = real:match("^(.*)/([^/]+)$")
  if kind ~= "file" or not resolve.kind(base) then
    return not_workflow(path, "it is neither a folder, a .zip archive nor a state file (.md or .sh)")
  end
  return scope_of.dir(dir == "" and "/" or dir), base
end

local function list_files(scope)
  local names = {}
  if scope.kind == "zip" or scope.kind == "yaml" then
    for name in pairs(scope.files) do names[#names + 1] = name end
  else
    for _, name in ipairs(raymond.listdir(scope.path) or {}) do
      if raymond.stat(scope.path .. "/" .. name) == "file" then names[#names + 1] = name end
    end
  end
  return names
end

function M.load(path, cwd, opts)
  opts = opts or {}
  local abs = path:sub(1, 1) == "/" and path or (cwd .. "/" .. path)
  local scope, entry = open_scope(path, abs)
  if not scope then return nil, entry end
  local wf = { path = scope.path, kind = scope.kind, scope = scope, states = {}, by_name = {},
    no_default_hooks = opts.no_default_hooks, resolved = {} }
  local files = {}
  for _, name in ipairs(list_files(scope)) do files[name] = true end
  wf.files = files
  wf.lookup = listed_scope(scope.path, files)
  local names = {}
  for name in pairs(files) do
    if states.of(name) then names[#names + 1] = name end
  end
  if #names == 0 then
    M.close(wf)
    return not_workflow(path, "it holds no state file (.md or .sh)")
  end
  table.sort(names)
  if entry then
    wf.entry = entry
  else
    local e, err = resolve.entry(wf.lookup)
    if e then
      wf.entry = e
    else
      wf.entry_error = { check = err:find("ambiguous", 1, true) and "ambiguous-entry-point" or "no-entry-point",
        msg = err }
    end
  end
  load_hooks(wf, opts)
  local bad_field = scope.check_fields and scope:check_fields(wf.hooks.frontmatter)
  if bad_field then
    M.close(wf)
    return nil, { msg = bad_field }
  end
  wf.fm_types = policy.types(wf.hooks.frontmatter)
  for _, name in ipairs(names) do
    local st = read_state(wf, name)
    wf.states[#wf.states + 1] = st
    wf.by_name[name] = st
  end
  for _, st in ipairs(wf.states) do
    build_edges(wf, st)
    st.seen = nil
  end
  return wf
end

-- Give back what the model holds open (an archive's descriptor).
function M.close(wf)
  if wf.kind ~= "dir" then wf.scope:close() end
end

return M
