-- raymond.spawn's input=, lines_max= and prints= (src/lua_sched.c, src/proc.c):
-- stdin is a pipe the loop fills without blocking, or /dev/null; a line
-- longer than the cap kills the command instead of growing memory; a
-- <print> line reaches prints whole, or in pieces cut between characters.
local T = require("testing")
local raymond = require("raymond")

local big = string.rep("0123456789abcdef", 65536) -- 1 MiB

local res = raymond.spawn({ argv = { "cat" }, input = big, capture = true })
T.test("an input of 1 MiB reaches the command's stdin whole, then end of file", function()
  T.eq(res.exit, 0)
  T.eq(#res.stdout, #big)
  T.eq(res.stdout == big, true, "the bytes are the input's")
end)

local closed = raymond.spawn({ argv = { "sh", "-c", "exec 0<&-; exit 3" }, input = big })
T.test("a command that closes its stdin unread still ends, and so does raymond's write", function()
  T.eq(closed.exit, 3)
end)

local empty = raymond.spawn({ argv = { "sh", "-c", "wc -c" }, input = "", capture = true })
T.test("an empty input is an immediate end of file", function()
  T.eq(empty.stdout:match("%d+"), "0")
end)

local none = raymond.spawn({ argv = { "sh", "-c", "readlink /proc/self/fd/0" }, capture = true })
T.test("without input, stdin is /dev/null", function()
  T.eq(none.stdout, "/dev/null\n")
end)

local seen = {}
local t0 = raymond.now()
local long = raymond.spawn({
  argv = { "sh", "-c", "echo short; head -c 100000 /dev/zero | tr '\\000' x; echo; echo after; sleep 60" },
  lines = function(l) seen[#seen + 1] = l end, lines_max = 4096,
})
T.test("a line over lines_max kills the command and is reported, the lines before it are handed on", function()
  T.eq(long.line_too_long, true)
  T.eq(#seen, 1)
  T.eq(seen[1], "short")
  T.eq(raymond.now() - t0 < 50, true, "ended by the kill, not by its sleep")
end)

local fine = raymond.spawn({ argv = { "sh", "-c", "echo one; echo two" }, lines = function() end })
T.test("a command whose lines fit is not marked", function()
  T.eq(fine.line_too_long, false)
  T.eq(fine.exit, 0)
end)

local got = {}
raymond.spawn({ argv = { "printf", "a\\nb" }, lines = function(l, unterminated) got[#got + 1] = { l, unterminated } end })
T.test("a last line without a newline is handed on, marked unterminated", function()
  T.eq(#got, 2)
  T.eq(got[1][1], "a")
  T.eq(got[1][2], false)
  T.eq(got[2][1], "b")
  T.eq(got[2][2], true)
end)

-- A <print> line longer than the prints function takes whole (64 KiB)
-- is handed on in pieces, each cut between characters: each text puts
-- a character of two, three or four bytes across the 65536th byte.
for _, text in ipairs({ "a" .. string.rep("\u{e9}", 40000), "ab" .. string.rep("\u{20ac}", 30000),
                        "ab" .. string.rep("\u{1f600}", 20000) }) do
  local pieces = {}
  raymond.spawn({
    argv = { "sh", "-c", "printf '<print>%s</print>' \"$1\"", "sh", text }, tags = true,
    prints = function(l) pieces[#pieces + 1] = l end,
  })
  T.test("a long <print> line reaches prints in pieces cut between UTF-8 characters (" .. #text .. " bytes)", function()
    T.eq(utf8.len(text:sub(1, 65536)), nil, "a character crosses the 65536th byte")
    T.eq(#pieces, 2)
    T.eq(table.concat(pieces) == text, true, "the pieces make up the line")
    for i, p in ipairs(pieces) do T.eq(utf8.len(p) ~= nil, true, "piece " .. i .. " is whole characters") end
  end)
end

local envd = raymond.spawn({ argv = { "sh", "-c", 'printf "%s|%s|%s|%s" "$A" "$B" "$C" "${D-unset}"' },
                             env = { A = "x y=z", B = 2, C = "", D = nil }, capture = true })
T.test("env values reach the command: strings as they are, numbers as text, nothing else", function()
  T.eq(envd.stdout, "x y=z|2||unset")
end)
