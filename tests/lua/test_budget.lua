-- What a Claude turn costs, as raymond.claude reads it: a reported cost
-- must be a plausible price, and a turn without one is charged the usage
-- its stream showed.
local T = require("testing")
local claude = require("raymond.claude")

local function read(lines)
  local st = claude.reader(nil)
  for _, l in ipairs(lines) do st.line(l) end
  return st
end

local function near(got, want, what)
  if math.abs(got - want) > 1e-12 then error(string.format("%s: got %.17g, expected %.17g", what or "value", got, want), 2) end
end

local function result(cost)
  return '{"type":"result","subtype":"success","is_error":false,"result":"<result>ok</result>",'
    .. '"session_id":"s","total_cost_usd":' .. cost .. '}'
end

local function assistant(id, model, input, output)
  return string.format('{"type":"assistant","message":{"id":"%s","model":"%s","content":[{"type":"text",'
    .. '"text":"t"}],"usage":{"input_tokens":%d,"output_tokens":%d}}}', id, model, input, output)
end

T.test("an impossible cost fails the turn with a message naming the value", function()
  local cases = {
    { "1e308", "total_cost_usd = 1e+308" }, { "NaN", "total_cost_usd = " }, { "Infinity", "total_cost_usd = inf" },
    { "-Infinity", "total_cost_usd = -inf" }, { "-1", "total_cost_usd = -1 " }, { "1000.5", "total_cost_usd = 1000.5 " },
    { '"0.5"', 'total_cost_usd = "0.5"' }, { "null", "total_cost_usd = null" }, { "[1]", "total_cost_usd = a table" },
  }
  for _, c in ipairs(cases) do
    local st = read({ assistant("m1", "claude-opus-4-8", 1000, 100), result(c[1]) })
    local out = claude.outcome({ exit = 0 }, st)
    T.eq(out.kind, "fatal", c[1])
    T.has(out.msg, "the Claude Code CLI reported an impossible cost: " .. c[2], c[1])
    T.has(out.msg, "(a turn costs from 0 to 1000 dollars)", c[1])
    -- Counted at what its stream showed: one opus call of 1000 in, 100 out.
    T.eq(out.cost, 0.0075, c[1] .. " counted")
    T.eq(out.estimated, true)
  end
end)

T.test("a plausible cost is taken as reported, from 0 to the bound", function()
  for _, c in ipairs({ "0", "0.015", "1000" }) do
    local out = claude.outcome({ exit = 0 }, read({ result(c) }))
    T.eq(out.kind, "ok", c)
    T.eq(out.cost, tonumber(c))
    T.eq(out.estimated, false)
  end
end)

T.test("a turn killed before its result is charged each API response its stream showed, once", function()
  local st = read({
    assistant("m1", "claude-opus-4-8", 1000, 100),   -- one response, told twice (two blocks)
    assistant("m1", "claude-opus-4-8", 1000, 100),
    assistant("m2", "claude-sonnet-5", 1000, 100),
    assistant("m3", "claude-haiku-4-5-20251001", 1000, 100),
  })
  local out = claude.outcome({ killed = true }, st)
  T.eq(out.kind, "stopped")
  near(out.cost, 0.0075 + 0.0045 + 0.0015, "cost")
  T.eq(out.estimated, true)
end)

T.test("a model of no known family is priced as the dearest; bad token counts count nothing", function()
  near(claude.price("claude-new-9", { input_tokens = 1e6 }), 10, "unknown model")
  T.eq(claude.price("claude-opus-4-8", { input_tokens = -5, output_tokens = "9", cache_read_input_tokens = 0 / 0 }), 0)
  near(claude.price("claude-opus-4-8", { cache_read_input_tokens = 1e6, cache_creation_input_tokens = 1e6 }),
    6.75, "cache tokens")
end)

T.test("the usage callback hears the estimate as it grows", function()
  local heard = {}
  local st = claude.reader(nil, function(usd) heard[#heard + 1] = usd end)
  st.line(assistant("m1", "claude-opus-4-8", 1000, 100))
  st.line(assistant("m1", "claude-opus-4-8", 1000, 100))
  st.line(assistant("m2", "claude-opus-4-8", 1000, 100))
  T.eq(#heard, 2)
  T.eq(heard[1], 0.0075)
  near(heard[2], 0.015, "second estimate")
end)

T.test("a state file's turns in flight must hold numbers, and a plausible usage", function()
  local runstate = require("raymond.runstate")
  local function state(turns)
    return '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{},"steps":0,"agents":[],'
      .. '"open_turns":' .. turns .. '}'
  end
  local rec = runstate.decode(state('{"k":{"agent":"main","usd":1,"seen":0.5}}'), "f.json")
  T.eq(rec.open_turns.k.seen, 0.5)
  local _, err = runstate.decode(state('{"k":{"usd":1,"seen":1e300}}'), "f.json")
  T.has(err, "state file f.json is not a valid raymond state: open_turns.k.seen is not a turn's cost (0 to 1000 dollars)")
  _, err = runstate.decode(state('{"k":{"usd":"1","seen":0}}'), "f.json")
  T.has(err, "open_turns.k.usd should be a number, found string")
  _, err = runstate.decode(state('[1]'), "f.json")
  T.has(err, "open_turns.1 should be a table, found number")
end)
