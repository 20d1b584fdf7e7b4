-- Tests for raymond.runinfo: the times, durations and columns that list,
-- status, watch and prune show.

local T = require("testing")
local raymond = require("raymond")
local runinfo = require("raymond.runinfo")
local runstate = require("raymond.runstate")
local text = require("raymond.text")

T.test("epoch reads the UTC times runstate writes, leap days and fractions included", function()
  T.eq(runinfo.epoch("1970-01-01T00:00:00.000000Z"), 0)
  T.eq(runinfo.epoch("2026-11-25T10:26:18.000000Z"), 1795602378)
  T.eq(runinfo.epoch("2024-02-29T23:59:59.000000Z"), 1709251199)
  T.eq(runinfo.epoch("2000-03-01T00:00:00.000000Z"), 951868800)
  T.eq(runinfo.epoch("2026-11-25T10:26:18.250000Z"), 1795602378.25)
  local now = raymond.now()
  T.eq(math.abs(runinfo.epoch(runstate.iso(now)) - now) < 1e-5, true, "round trip through runstate.iso")
  T.eq(runinfo.epoch("2026-11-25 10:26:18"), nil, "not runstate's form")
  T.eq(runinfo.epoch(nil), nil)
end)

T.test("an amount shows as dollars to four places, nothing spent as zero", function()
  T.eq(text.usd(0.5), "$0.5000")
  T.eq(text.usd(0.00751), "$0.0075")
  T.eq(text.usd(nil), "$0.0000")
end)

T.test("duration shows two units at most", function()
  T.eq(runinfo.duration(0), "0s")
  T.eq(runinfo.duration(59.9), "59s")
  T.eq(runinfo.duration(192), "3m12s")
  T.eq(runinfo.duration(3600 * 2 + 5 * 60 + 7), "2h05m")
  T.eq(runinfo.duration(86400 * 3 + 3600 * 4 + 1), "3d04h")
  T.eq(runinfo.duration(-5), "0s", "a clock set back shows no negative time")
end)

T.test("seconds reads a whole number and a unit, and nothing else", function()
  T.eq(runinfo.seconds("30m"), 1800)
  T.eq(runinfo.seconds("12h"), 43200)
  T.eq(runinfo.seconds("7d"), 604800)
  T.eq(runinfo.seconds("2w"), 1209600)
  T.eq(runinfo.seconds("0s"), 0)
  for _, bad in ipairs({ "7", "d", "-1d", "1.5h", "7D", " 7d", "7d ", "7days", "9999999999d" }) do
    T.eq(runinfo.seconds(bad), nil, bad)
  end
end)

T.test("short_states shows the first distinct state and counts the others", function()
  T.eq(runinfo.short_states({}), "-")
  T.eq(runinfo.short_states({ "A.md" }), "A.md")
  T.eq(runinfo.short_states({ "A.md", "A.md", "A.md" }), "A.md")
  T.eq(runinfo.short_states({ "REVIEW.md", "A.sh", "REVIEW.md", "B.sh", "C.sh" }), "REVIEW.md, +3 more")
end)
