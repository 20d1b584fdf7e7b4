-- raymond.json_encode: exact numbers, sorted keys, clear errors.
local T = require("testing")
local raymond = require("raymond")
local cjson = raymond.cjson

T.test("integers are written exactly, floats read back to the same double", function()
  local v = { big = 9007199254740992, neg = -42, t = 1700000000.123456, third = 1 / 3, whole = 3.0 }
  local text = assert(raymond.json_encode(v))
  T.has(text, '"big":9007199254740992', "2^53, the largest integer read back exactly")
  T.has(text, '"neg":-42', "negative integer")
  T.has(text, '"whole":3.0', "integral float keeps a fraction")
  local back = cjson.decode(text)
  T.eq(back.t, 1700000000.123456, "timestamp with microseconds")
  T.eq(back.third, 1 / 3, "1/3")
end)

T.test("every whole number within 2^53 is written in decimal, as %d writes it", function()
  local cases = { 0, 1, -1, 9, 10, -10, 99, 100, 123456789, -987654321, 1 << 53, -(1 << 53), (1 << 53) - 1 }
  for n = 1, 60 do cases[#cases + 1] = (1 << n) - 1 end
  for _, i in ipairs(cases) do
    if math.abs(i) <= 1 << 53 then T.eq(raymond.json_encode({ i }), "[" .. string.format("%d", i) .. "]") end
  end
end)

T.test("keys are sorted, lists are arrays, empty tables are {}", function()
  T.eq(raymond.json_encode({ b = 1, a = { 3, 2, 1 }, c = {} }), '{"a":[3,2,1],"b":1,"c":{}}')
  T.eq(raymond.json_encode({ [1] = "x", [3] = "y" }), nil, "a sparse list has no faithful JSON")
end)

T.test("an empty table marked as a list is []", function()
  local list = setmetatable({}, { __jsontype = "array" })
  T.eq(raymond.json_encode({ agents = list }), '{"agents":[]}')
  list[1] = "a"
  T.eq(raymond.json_encode(list), '["a"]')
  T.eq(raymond.json_encode(setmetatable({}, { __jsontype = "object" })), "{}")
end)

T.test("strings are escaped and keep every byte", function()
  local s = 'quote " back \\ nl \n cr \r tab \t nul \0 bell \7 / é 世界'
  local text = assert(raymond.json_encode({ s = s }))
  T.has(text, '\\u0000', "NUL escaped")
  T.has(text, '\\u0007', "control escaped")
  T.eq(cjson.decode(text).s, s, "round trip")
end)

T.test("values JSON cannot hold are errors naming where they are", function()
  local _, err = raymond.json_encode({ data = { hook = { fn = print } } })
  T.has(err, "data.hook.fn is a function", "function")
  _, err = raymond.json_encode({ list = { 1, 0 / 0 } })
  T.has(err, "list[2] is not a finite number", "nan")
  local cyc = {}
  cyc.self = cyc
  _, err = raymond.json_encode(cyc)
  T.has(err, "nested too deeply", "cycle")
  _, err = raymond.json_encode({ [2.5] = 1 })
  T.has(err, "neither a string nor a whole number", "float key")
end)

T.test("keys keep NUL bytes and sort by their bytes", function()
  local text = assert(raymond.json_encode({ ["a\0b"] = 1, ["a"] = 2, ["a\0a"] = 3 }))
  T.eq(text, '{"a":2,"a\\u0000a":3,"a\\u0000b":1}')
  local back = cjson.decode(text)
  T.eq(back["a\0b"], 1, "key with NUL")
end)
