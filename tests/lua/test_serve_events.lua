-- raymond.serve_events: a run's debug record as Server-Sent Events.  The
-- record is written here by raymond.record, as a run writes it.
local T = require("testing")
local raymond = require("raymond")
local record = require("raymond.record")
local events = require("raymond.serve_events")

local DIR = T.tmpdir()

-- The events of SSE text: a list of { id =, event =, data = (decoded) }.
local function parse(text)
  local list = {}
  for block in (text .. "\n\n"):gmatch("(.-)\n\n") do
    local e = {}
    for line in block:gmatch("[^\n]+") do
      local k, v = line:match("^(%a+): (.*)$")
      if k == "data" then
        T.eq(e.data, nil, "one data line per event")
        e.data = raymond.cjson.decode(v)
      elseif k then
        e[k] = v
      end
    end
    if e.event then list[#list + 1] = e end
  end
  return list
end

local function of_type(list, kind)
  local out = {}
  for _, e in ipairs(list) do
    if e.event == kind then out[#out + 1] = e end
  end
  return out
end

local function claude_line(t) return raymond.json_encode(t) .. "\n" end

local function write_run(path)
  local rec = assert(record.open(path))
  local s1 = rec:step(1, "main_START.sh", { agent = "main", state = "START.sh", started_at = 1795830363.5 })
  -- A script's output that looks like SSE must stay inside its event.
  s1:put("stdout", "<print>half ")
  s1:put("stdout", "a print</print>\n\nevent: run\ndata: {\"forged\":true}\nid: 99999\n\n")
  s1:put("stderr", "warning\n")
  s1:finish({ exit = 0, duration = 0.5 })
  rec:transition("main", "START.sh", "goto REVIEW.md")
  local s2 = rec:step(2, "main_REVIEW.md", { agent = "main", state = "REVIEW.md", turn = true, purpose = "state" })
  s2:put("prompt", string.rep("p", 100000))
  local text = claude_line({ type = "assistant", message = { content = {
    { type = "text", text = "looking <print>from the model</print>" },
    { type = "tool_use", name = "Bash", input = { command = "ls" } } } } })
  -- A line of stream-json cut in two chunks, as a pipe may deliver it.
  s2:put("stdout", text:sub(1, 20))
  s2:put("stdout", text:sub(21) .. "not json\n")
  s2:finish({ exit = 0, cost_usd = 0.25 })
  rec:decision("[main] budget: $0.25 of $1.00")
  rec:note("worktree", "removed .raymond/worktrees/x")
  rec:close()
end

T.test("each piece becomes its events; output cannot forge an event", function()
  local path = DIR .. "/a.record"
  write_run(path)
  local list = parse(events.read(path))
  local steps = of_type(list, "step")
  T.eq(#steps, 2)
  T.eq(steps[1].data.agent, "main")
  T.eq(steps[1].data.at, "2026-11-28T01:46:03.500000Z")
  T.eq(steps[2].data.turn, true)
  T.eq(#of_type(list, "run"), 0, "no forged run event")
  local out = of_type(list, "output")
  T.eq(#out, 3)
  T.has(out[2].data.text, "data: {\"forged\":true}", "the forged lines are text of an output event")
  T.eq(out[3].data.stream, "stderr")
  local prints = of_type(list, "print")
  T.eq(#prints, 2)
  T.eq(prints[1].data.text, "half a print", "a print split across chunks")
  T.eq(prints[2].data.text, "from the model")
  T.eq(of_type(list, "text")[1].data.text, "looking <print>from the model</print>")
  local tool = of_type(list, "tool")[1]
  T.eq(tool.data.name, "Bash")
  T.eq(tool.data.input, '{"command":"ls"}')
  local ends = of_type(list, "step_end")
  T.eq(ends[1].data.exit, 0)
  T.eq(ends[2].data.cost, 0.25)
  local tr = of_type(list, "transition")[1].data
  T.eq(tr.agent, "main")
  T.eq(tr.from, "START.sh")
  T.eq(tr.to, "goto REVIEW.md")
  T.eq(of_type(list, "decision")[1].data.text, "[main] budget: $0.25 of $1.00")
  T.eq(of_type(list, "note")[1].data.piece, "worktree")
  for _, e in ipairs(list) do
    T.eq(e.data.text and e.data.text:find("ppppp", 1, true), nil, "the prompt is never sent")
  end
  T.eq(list[#list].id, tostring(#assert(raymond.read_file(path))), "the last id is the record's end")
end)

T.test("from a Last-Event-ID: only what came after, and the agent of an earlier step known", function()
  local path = DIR .. "/a.record"
  local all = parse(events.read(path))
  local ids = {}
  for i, e in ipairs(all) do
    if e.id then ids[#ids + 1] = { i = i, id = e.id } end
  end
  for _, cut in ipairs(ids) do
    local rest = parse(events.read(path, tonumber(cut.id)))
    T.eq(#rest, #all - cut.i, "events after id " .. cut.id)
    for k, e in ipairs(rest) do
      T.same(e.data, all[cut.i + k].data, "event " .. k .. " after id " .. cut.id)
    end
  end
end)

T.test("a client with little room gets the same events, in pieces", function()
  local path = DIR .. "/a.record"
  local whole = events.read(path)
  T.eq(events.read(path, 0, 1000), whole, "1000 bytes at a time")
  T.eq(events.read(path, 0, 400), whole, "400 bytes at a time")
end)

T.test("a long text is cut; a damaged record says so and sends nothing forged", function()
  local path = DIR .. "/b.record"
  local rec = assert(record.open(path))
  local s = rec:step(1, "main_START.sh", { agent = "main", state = "START.sh" })
  s:put("stdout", string.rep("y", events.MAX_TEXT + 10))
  rec:close()
  local list = parse(events.read(path))
  T.has(of_type(list, "output")[1].data.text, "(10 bytes more)")
  local f = assert(io.open(path, "ab"))
  f:write("@ 2 stdout zz\ngarbage\n")
  f:close()
  list = parse(events.read(path))
  local notes = of_type(list, "note")
  T.eq(#notes, 1)
  T.eq(notes[1].data.piece, "error")
  T.has(notes[1].data.text, "damaged")
  local other = DIR .. "/c.record"
  assert(raymond.write_atomic(other, "not a record at all\n"))
  T.has(of_type(parse(events.read(other)), "note")[1].data.text, "not a raymond debug record")
end)

T.test("a piece not yet whole is waited for, not read half", function()
  local path = DIR .. "/d.record"
  local rec = assert(record.open(path))
  rec:step(1, "main_START.sh", { agent = "main", state = "START.sh" })
  rec:close()
  local f = assert(io.open(path, "ab"))
  f:write("@ 1 stdout 10\nhalf")
  f:close()
  local list = parse(events.read(path))
  T.eq(#list, 1, "the step alone")
  f = assert(io.open(path, "ab"))
  f:write("-done\n\n")
  f:close()
  list = parse(events.read(path, tonumber(list[1].id)))
  T.eq(list[1].data.text, "half-done\n")
end)
