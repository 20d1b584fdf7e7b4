-- Tests for the debug record (src/record.c, lua/raymond/record.lua): each
-- piece comes back byte for byte, whatever it holds, in the order written.

local T = require("testing")
local raymond = require("raymond")
local record = require("raymond.record")

local DIR = T.tmpdir()

T.test("pieces come back exactly, binary and empty ones too", function()
  local path = DIR .. "/a.record"
  local rec = assert(record.open(path))
  local step = rec:step(1, "main_START.sh", { argv = { "bash", "x" } })
  local binary = "\0\1\2\n@ 9 fake 3\n\255" .. string.rep("x", 5000)
  step:put("stdout", binary)
  step:put("stderr", "")
  step:put("prompt", "ends with a newline\n")
  step:finish({ exit = 0 })
  rec:transition("main", "START.sh", "goto B.sh")
  rec:close()
  local pieces = assert(record.read(path))
  T.eq(#pieces, 6, "pieces")
  T.eq(pieces[1].piece, "start")
  T.same(raymond.cjson.decode(pieces[1].data), { argv = { "bash", "x" }, name = "main_START.sh" })
  T.eq(pieces[2].data, binary, "binary stdout")
  T.eq(pieces[3].data, "", "empty stderr")
  T.eq(pieces[4].data, "ends with a newline\n", "prompt")
  T.eq(pieces[5].piece, "end")
  T.eq(pieces[6].piece, "transition")
  T.eq(pieces[6].step, 1, "a transition belongs to the last step")
  assert(pieces[6].data:find("[main] START.sh -> goto B.sh", 1, true))
end)

T.test("a second process appends to the same record", function()
  local path = DIR .. "/b.record"
  local rec = assert(record.open(path))
  rec:step(1, "main_A.sh", {}):put("stdout", "one")
  rec:close()
  rec = assert(record.open(path))
  rec:step(2, "main_B.sh", {}):put("stdout", "two")
  rec:close()
  local pieces = assert(record.read(path))
  T.eq(#pieces, 4, "pieces")
  T.eq(pieces[2].data, "one")
  T.eq(pieces[4].data, "two")
  T.eq(pieces[4].step, 2)
end)

T.test("a spawned child's output goes into the record as it arrives", function()
  local path = DIR .. "/c.record"
  local rec = assert(record.open(path))
  local step = rec:step(7, "main_X.sh", {})
  local res = raymond.spawn({ argv = { "sh", "-c", "printf out; printf err >&2" },
                              record = step.record, record_step = step.n })
  T.eq(res.exit, 0, "exit")
  rec:close()
  local got = {}
  for _, p in ipairs(assert(record.read(path))) do
    if p.step == 7 and p.piece ~= "start" then got[p.piece] = (got[p.piece] or "") .. p.data end
  end
  T.same(got, { stdout = "out", stderr = "err" })
end)

T.test("bad piece names are refused; a damaged record says where", function()
  local path = DIR .. "/d.record"
  local ud = assert(raymond.record_open(path))
  local ok, err = ud:put(1, "two words", "x")
  T.eq(ok, nil, "refused")
  assert(err:find("cannot write the debug record", 1, true))
  ud:close()
  local f = assert(io.open(path, "ab"))
  f:write("@ 1 stdout 99\nshort")
  f:close()
  local pieces, rerr = record.read(path)
  T.eq(pieces, nil, "damaged")
  assert(rerr:find("damaged", 1, true), rerr)
end)
