-- raymond.join: waiting for a fork's workers and gathering their results.
--
-- `<fork next="N" join="SUMMARY" wait="all">W</fork>`: the workers a
-- reply forks with join= form one join group.  The parent goes on at N at
-- once; each worker that ends hands its <result> payload to the group,
-- and a worker whose state fails hands its error instead of failing the
-- run.  Once the group's policy is decided, a new agent (the summary)
-- starts at SUMMARY with the results as JSON, in fork order.
-- docs/protocol.md, "Joins", is the user's description.
--
--   decide(forks, resolve)  the join of a reply's <fork> tags, checked
--   open(rec, parent, tr, workers)  records the group of a decided fork
--   settle(run, agent, status, value, detail)  a member ended or failed;
--                           returns the summary agent when the join fires
--   check(rec, v)           validates the groups of a loaded record
--
-- The group lives in the run record (rec.joins, keyed by the id of its
-- first worker, which no other agent ever gets) and every change to it is
-- made in the same Lua step as the change to the agents, so one save
-- holds both: after a kill -9 at any instant, a resume finds each worker
-- either still live (its state runs again) or settled in its group, and
-- the summary either not yet made or made exactly once.
--
-- A group:
--   parent   the id of the agent that forked (the summary's id is made
--            from it, as a worker's is)
--   target   the summary's state
--   wait     "all", "first" or a number of successes, as written
--   need     how many successes fire the join early (all: every worker)
--   cwd      the parent's directory at the fork: the summary starts there
--   members  in fork order: { agent =, state =, status = "running" | "ok"
--            | "failed" | "cancelled", result =, truncated =, error =,
--            detail = }

local raymond = require("raymond")
local console = require("raymond.console")

local M = {}

M.STATUSES = { running = true, ok = true, failed = true, cancelled = true }

-- The longest payload a join keeps of one worker, in bytes.  A pending
-- group is saved with every transition of the run, so what it holds costs
-- at each save; work bigger than this belongs in files, whose names the
-- workers return.  A longer payload is cut (at a character boundary) and
-- its entry says how long it was (`truncated`).
M.RESULT_MAX = 1024 * 1024

-- `s` cut to at most `max` bytes, never inside a UTF-8 sequence.
local function cut(s, max)
  local n = max
  while n > 0 and (s:byte(n + 1) or 0) & 0xC0 == 0x80 do n = n - 1 end
  return s:sub(1, n)
end

-- The number of successes `wait` names ("all" and "first" too, as
-- "all" and 1), or nil and why it is no policy, whatever the workers.
function M.form(wait)
  if wait == nil or wait == "all" then return "all" end
  if wait == "first" then return 1 end
  local k = wait:match("^%s*(%d+)%s*$") and math.tointeger(tonumber(wait))
  if not k then
    return nil, string.format("wait=\"%s\" is not a join policy; write wait=\"all\" (the default), "
      .. "wait=\"first\" (the first success) or wait=\"N\" (N successes)", wait)
  end
  if k < 1 then return nil, string.format("wait=\"%s\" asks for no success; give a number from 1", wait) end
  return k
end

-- How many successes `wait` asks for of `n` workers, or nil and why.
function M.need(wait, n)
  local k, err = M.form(wait)
  if not k then return nil, err end
  if k == "all" then return n end
  if k > n then
    return nil, string.format("wait=\"%s\" asks for %d successes of %d worker%s; give a number from 1 to %d",
      wait, k, n, n == 1 and "" or "s", n)
  end
  return k
end

-- The join attribute `name` looks like a misspelling of ("join" or
-- "wait"), or nil.  A fork's other attributes become worker variables, so
-- a misspelt jion="SUM" would otherwise start workers that no join
-- waits for; two letters swapped and a plural are refused instead.
local RESERVED = { "join", "wait" }

function M.misspelt(name)
  for _, r in ipairs(RESERVED) do
    if name == r .. "s" then return r end
    if #name == #r and name ~= r then
      for i = 1, #r - 1 do
        if name == r:sub(1, i - 1) .. r:sub(i + 1, i + 1) .. r:sub(i, i) .. r:sub(i + 2) then return r end
      end
    end
  end
  return nil
end

-- The join of a reply's <fork> tags `forks` (parsed tags), with their
-- state names resolved by `resolve(tag, attr)` (nil and a message on
-- failure).  Returns nil when no fork joins, { join =, wait = } when
-- they all do, or false and a message.  Every fork of one reply joins
-- the same state or none does: a group is what the reply forked, and a
-- mix would leave it unclear which workers the summary waits for.
function M.decide(forks, resolve)
  local join, wait, first, plain
  for _, t in ipairs(forks) do
    local j = t.attrs.join
    if j == nil then
      plain = plain or t
      if t.attrs.wait ~= nil then
        return false, string.format("<fork wait=\"%s\">%s</fork> has no join=\"STATE\"; wait= says how "
          .. "many workers a join waits for", t.attrs.wait, t.body)
      end
    else
      local name, err = resolve(t, "join")
      if not name then return false, err end
      if join and name ~= join then
        return false, string.format("the forks of one reply join different states (%s and %s); "
          .. "a reply's forks form one join group", join, name)
      end
      join, first = name, first or t
      if t.attrs.wait ~= nil then
        if wait and t.attrs.wait ~= wait then
          return false, string.format("the forks of one reply wait differently (wait=\"%s\" and "
            .. "wait=\"%s\"); give every fork the same wait=", wait, t.attrs.wait)
        end
        wait = t.attrs.wait
      end
    end
  end
  if not join then return nil end
  if plain then
    return false, string.format("<fork>%s</fork> has no join= while another fork of the reply joins "
      .. "%s; every fork of one reply joins the same state, or none does", plain.body, join)
  end
  local _, err = M.need(wait, #forks)
  if err then return false, err end
  return { join = join, wait = wait or "all" }
end

-- Record the group of fork transition `tr` (tr.join set) that `parent`
-- made, whose new agents are `workers`, in run record `rec`.
function M.open(rec, parent, tr, workers)
  local members = {}
  for i, w in ipairs(workers) do
    members[i] = { agent = w.id, state = w.state, status = "running" }
  end
  local gid = workers[1].id
  rec.joins = rec.joins or {}
  rec.joins[gid] = { parent = parent.id, target = tr.join, wait = tr.wait or "all",
                     need = (M.need(tr.wait, #workers)), cwd = parent.cwd, members = members }
  for _, w in ipairs(workers) do w.join = gid end
end

-- What this process knows of a group beyond its record: the index of
-- each member and the counts, made from the members at first use.
local tallies = setmetatable({}, { __mode = "k" })

local function tally(group)
  local t = tallies[group]
  if t then return t end
  t = { index = {}, ok = 0, failed = 0, running = 0, cancelled = 0 }
  for i, m in ipairs(group.members) do
    t.index[m.agent] = i
    t[m.status] = t[m.status] + 1
  end
  tallies[group] = t
  return t
end

-- Whether the group's outcome is known: no worker left running, or (for
-- first and N) enough successes, or too few still possible.  "all" waits
-- for every worker, whatever their outcome.
function M.decided(group)
  local t = tally(group)
  if t.running == 0 then return true end
  if group.wait == "all" then return false end
  return t.ok >= group.need or t.ok + t.running < group.need
end

-- One line for `raymond status`: "main_w1 of main -> SUM.sh (wait all):
-- 2 of 5 ended (1 ok, 1 failed)".
function M.describe(gid, group)
  local t = tally(group)
  return string.format("%s of %s -> %s (wait %s): %d of %d ended (%d ok, %d failed)", gid, group.parent,
    group.target, group.wait, #group.members - t.running, #group.members, t.ok, t.failed)
end

-- The results as the summary sees them: a JSON list in fork order.
function M.results(group)
  local list = {}
  for i, m in ipairs(group.members) do
    list[i] = { agent = m.agent, state = m.state, status = m.status, result = m.result,
                error = m.error, detail = m.detail, truncated = m.truncated }
  end
  return assert(raymond.json_encode(list))
end

-- This process's cancellers, by agent: a join that fires early ends the
-- commands of the members it no longer waits for (raymond.canceller).
local cancellers = setmetatable({}, { __mode = "k" })

-- The canceller of `agent`'s commands, for raymond.executor; made for
-- members of a join only.
function M.canceller(agent)
  if not agent.join then return nil end
  local c = cancellers[agent]
  if not c then
    c = raymond.canceller()
    cancellers[agent] = c
  end
  return c
end

-- The members still running when the join fired early: recorded as
-- cancelled, removed from the run, and their commands ended.  Their
-- coroutines see agent.cancelled and return without a transition.
-- Returns the agents cancelled.
local function cancel_rest(rec, group)
  local t = tally(group)
  local stop = {}
  for _, m in ipairs(group.members) do
    if m.status == "running" then
      m.status = "cancelled"
      t.running, t.cancelled = t.running - 1, t.cancelled + 1
      stop[m.agent] = true
    end
  end
  if not next(stop) then return {} end
  local kept, gone = {}, {}
  for _, a in ipairs(rec.agents) do
    if stop[a.id] then
      a.cancelled = true
      local c = cancellers[a]
      if c then c:cancel() end
      console.progress("[%s] %s: cancelled, the join no longer waits for it", a.id, a.state)
      gone[#gone + 1] = a
    else
      kept[#kept + 1] = a
    end
  end
  rec.agents = kept
  return gone
end

-- The summary agent of a group that fired.
local function summary(rec, gid, group, make_id)
  local results = M.results(group)
  rec.joins[gid] = nil
  if not next(rec.joins) then rec.joins = nil end
  return { id = make_id(rec, { id = group.parent }, group.target), state = group.target, stack = {},
           cwd = group.cwd, input = results, results = results, vars = {}, data = {} }
end

-- Member `agent` of a join ended: status "ok" with its <result> payload
-- `value`, or "failed" with its error `value` (and `detail`, the last
-- lines of its output).  The caller has removed it from rec.agents.
-- Returns the summary agent and the id of the group's parent, for the
-- caller to start it, and the members it cancelled, when the join fires,
-- else nil.  `make_id(rec, parent, target)` names the summary as a worker
-- of the group's parent (raymond.tags.worker_id).
function M.settle(run, agent, status, value, detail, make_id)
  local rec = run.rec
  local gid = agent.join
  local group = rec.joins and rec.joins[gid]
  if not group then return nil end
  local t = tally(group)
  local m = group.members[t.index[agent.id]]
  if not m or m.status ~= "running" then return nil end
  m.status, m.state = status, agent.state
  if status == "ok" then
    m.result = value
    if #value > M.RESULT_MAX then
      m.result, m.truncated = cut(value, M.RESULT_MAX), #value
      console.warn("[%s] %s: its result is %d bytes; the join keeps the first %d", agent.id, agent.state,
        #value, #m.result)
    end
  else
    m.error, m.detail = value, detail
  end
  t.running, t[status] = t.running - 1, t[status] + 1
  raymond.mark_dirty()
  if not M.decided(group) then return nil end
  local cancelled = cancel_rest(rec, group)
  local s = summary(rec, gid, group, make_id)
  console.progress("[%s] join of %d worker%s (wait %s): %d ok, %d failed, %d cancelled; %s starts at %s",
    group.parent, #group.members, #group.members == 1 and "" or "s", group.wait, t.ok, t.failed,
    t.cancelled, s.id, s.state)
  return s, group.parent, cancelled
end

-- The results in a file for a script of the summary: $RAYMOND_RESULTS_FILE,
-- beside the payload's file (raymond.states.script), removed with it.
-- Returns the path or nil, and an error message.
function M.results_file(run, agent, env)
  if not agent.results then return nil end
  local err
  if not run.input_dir then run.input_dir, err = raymond.mkdtemp("raymond-input-") end
  if not run.input_dir then return nil, err end
  local path = run.input_dir .. "/" .. agent.id .. ".results"
  os.remove(path)
  local ok, werr = raymond.append_file(path, agent.results)
  if not ok then
    os.remove(path)
    return nil, werr
  end
  env.RAYMOND_RESULTS_FILE = path
  return path
end

-- Validate the joins of loaded record `rec`, raising a message naming the
-- field at fault.  `v` holds runstate's checkers: expect, opt, list, int,
-- state_name, dir.
function M.check(rec, v)
  local joins = v.opt(rec.joins, "table", "joins") or {}
  local live = {}
  for i, a in ipairs(rec.agents) do
    local w = "agents[" .. i .. "]"
    v.opt(a.results, "string", w .. ".results")
    if v.opt(a.join, "string", w .. ".join") then
      if not joins[a.join] then
        error(string.format("%s.join '%s' names no group in joins", w, a.join), 0)
      end
      live[a.id] = a.join
    end
  end
  for gid, g in pairs(joins) do
    local w = "joins." .. tostring(gid)
    v.expect(g, "table", w)
    v.expect(g.parent, "string", w .. ".parent")
    v.state_name(g.target, w .. ".target")
    v.expect(g.wait, "string", w .. ".wait")
    v.dir(g.cwd, w .. ".cwd")
    v.list(g.members, w .. ".members")
    if #g.members == 0 then error(w .. ".members is empty; a join has at least one worker", 0) end
    local need, nerr = M.need(g.wait, #g.members)
    if not need then error(w .. ".wait: " .. nerr, 0) end
    if v.int(g.need, w .. ".need") ~= need then
      error(string.format("%s.need is %d, but wait '%s' of %d workers needs %d", w, g.need, g.wait,
        #g.members, need), 0)
    end
    local seen = {}
    for j, m in ipairs(g.members) do
      local mw = string.format("%s.members[%d]", w, j)
      v.expect(m, "table", mw)
      v.expect(m.agent, "string", mw .. ".agent")
      if seen[m.agent] then error(string.format("%s.agent '%s' is listed twice", mw, m.agent), 0) end
      seen[m.agent] = true
      v.state_name(m.state, mw .. ".state")
      v.expect(m.status, "string", mw .. ".status")
      if not M.STATUSES[m.status] then
        error(string.format("%s.status '%s' is not running, ok, failed or cancelled", mw, m.status), 0)
      end
      v.opt(m.result, "string", mw .. ".result")
      v.opt(m.error, "string", mw .. ".error")
      v.opt(m.detail, "string", mw .. ".detail")
      if v.opt(m.truncated, "number", mw .. ".truncated") then v.int(m.truncated, mw .. ".truncated") end
      -- A running member is a live agent of this group, and the other
      -- way round: a worker outside its group would never be gathered.
      if (m.status == "running") ~= (live[m.agent] == gid) then
        error(string.format(m.status == "running" and "%s is running, but no agent '%s' of this join is live"
          or "%s has ended, but agent '%s' is still live in this join", mw, m.agent), 0)
      end
    end
    for id, jid in pairs(live) do
      if jid == gid and not seen[id] then
        error(string.format("agent '%s' belongs to %s, which does not list it", id, w), 0)
      end
    end
    if M.decided(g) then
      tallies[g] = nil
      error(w .. " is decided but has not fired: its summary never started", 0)
    end
  end
  if next(joins) then rec.joins = joins end
end

return M
