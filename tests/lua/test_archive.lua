-- raymond.zip_open and the archive's read / extract / close, sha256_file,
-- mkdtemp, rmtree, end to end.  The zip files are written byte by byte by a small
-- STORED (uncompressed) writer below, so no zip tool is needed.
local T = require("testing")
local raymond = require("raymond")

-- CRC-32 (IEEE 802.3, reflected), as zip records it.
local crc_table = {}
for i = 0, 255 do
  local c = i
  for _ = 1, 8 do
    if c & 1 == 1 then c = 0xEDB88320 ~ (c >> 1) else c = c >> 1 end
  end
  crc_table[i] = c
end

local function crc32(s)
  local c = 0xFFFFFFFF
  for i = 1, #s do
    c = crc_table[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8)
  end
  return c ~ 0xFFFFFFFF
end

-- The bytes of a zip archive holding `entries`, a list of {name, data};
-- data nil makes a directory entry (the name should end in "/").
local function zip_bytes(entries)
  local locals, central, offset = {}, {}, 0
  for _, e in ipairs(entries) do
    local name, data = e[1], e[2] or ""
    local crc = crc32(data)
    -- Version 2.0, no flags, stored, 1980-01-01 00:00.
    local lfh = string.pack("<I4I2I2I2I2I2I4I4I4I2I2",
      0x04034b50, 20, 0, 0, 0, 0x21, crc, #data, #data, #name, 0) .. name .. data
    local attr = e[2] == nil and 0x10 or 0 -- MS-DOS directory bit
    central[#central + 1] = string.pack("<I4I2I2I2I2I2I2I4I4I4I2I2I2I2I2I4I4",
      0x02014b50, 20, 20, 0, 0, 0, 0x21, crc, #data, #data, #name, 0, 0, 0, 0,
      attr, offset) .. name
    locals[#locals + 1] = lfh
    offset = offset + #lfh
  end
  local cd = table.concat(central)
  local eocd = string.pack("<I4I2I2I2I2I4I4I2",
    0x06054b50, 0, 0, #entries, #entries, #cd, offset, 0)
  return table.concat(locals) .. cd .. eocd
end

local function put(path, data)
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  assert(f:close())
end

local function get(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("a")
  f:close()
  return data
end

local function mode(path)
  local p = assert(io.popen("stat -c %a '" .. path .. "'"))
  local m = p:read("l")
  p:close()
  return m
end

local DIR = assert(raymond.mkdtemp("ray-test-archive-"))

-- Open `path`, read or extract through the archive, close it.
local function zip_read(path, name)
  local a <close>, err, code = raymond.zip_open(path)
  if not a then return nil, err, code end
  return a:read(name)
end

local function zip_extract(path, dir)
  local a <close>, err, code = raymond.zip_open(path)
  if not a then return nil, err, code end
  return a:extract(dir)
end

local function write_zip(name, entries)
  local path = DIR .. "/" .. name
  put(path, zip_bytes(entries))
  return path
end

T.test("the zip writer's CRC-32 and sha256_file agree with the standard values", function()
  T.eq(string.format("%08x", crc32("123456789")), "cbf43926", "CRC-32 check value")
  local path = write_zip("check.zip", { { "START.md", "hi" } })
  local p = assert(io.popen("sha256sum '" .. path .. "'"))
  local theirs = p:read("l"):sub(1, 64)
  p:close()
  T.eq(raymond.sha256_file(path), theirs)
end)

T.test("sha256_file: a known vector, and errors name the path", function()
  local path = DIR .. "/abc.txt"
  put(path, "abc")
  T.eq(raymond.sha256_file(path),
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
  local none, err = raymond.sha256_file(DIR .. "/missing")
  T.eq(none, nil)
  T.has(err, "cannot open '" .. DIR .. "/missing': No such file or directory")
  T.eq(pcall(raymond.sha256_file), false, "no argument raises")
end)

T.test("zip_open lists a flat archive with its hash", function()
  local path = write_zip("flat.zip", {
    { "START.md", "# start\n" }, { "check.sh", "exit 0\n" }, { "data.json", "{}" },
  })
  local z = assert(raymond.zip_open(path))
  T.eq(type(z), "userdata")
  T.eq(z.path, path)
  T.eq(z.sha256, raymond.sha256_file(path))
  T.same(z.files, { ["START.md"] = true, ["check.sh"] = true, ["data.json"] = true })
  T.eq(z:read("check.sh"), "exit 0\n")
  z:close()
end)

T.test("zip_open strips the one folder", function()
  local path = write_zip("folder.zip", {
    { "flow/", nil }, { "flow/START.md", "go" }, { "flow/b.md", "bee" },
  })
  local z = assert(raymond.zip_open(path))
  T.same(z.files, { ["START.md"] = true, ["b.md"] = true })
  T.eq(zip_read(path, "b.md"), "bee")
  local none, err = zip_read(path, "flow/b.md")
  T.eq(none, nil)
  T.has(err, "archive '" .. path .. "' has no file named 'flow/b.md'")
end)

T.test("zip_read returns every byte", function()
  local bin = {}
  for i = 0, 255 do bin[#bin + 1] = string.char(i) end
  bin = table.concat(bin)
  local path = write_zip("bin.zip", { { "all.bin", bin }, { "empty", "" } })
  T.eq(zip_read(path, "all.bin"), bin)
  T.eq(zip_read(path, "empty"), "")
end)

T.test("layout and name errors name the archive and the entry", function()
  local cases = {
    { { { "a/x", "1" }, { "b/y", "2" } }, "has several top-level folders: 'a/' and 'b/'" },
    { { { "START.md", "1" }, { "sub/", nil } },
      "mixes files and folders at the top level: 'START.md' and 'sub/'" },
    { { { "flow/sub/x.md", "1" } }, "nests 'flow/sub/x.md' too deeply" },
    { { { "START.md", "1" }, { "sub/x", "2" } },
      "nests 'sub/x' too deeply: 'START.md' is at the top level" },
    { { { "flow/", nil } }, "has no files" },
    { {}, "has no files" },
    { { { "../evil", "1" } }, "has an entry with a '..' segment: '../evil'" },
    { { { "/etc/passwd", "1" } }, "has an entry with an absolute name: '/etc/passwd'" },
    { { { "C:\\x", "1" } }, "has an entry with an absolute name (a drive letter)" },
    { { { "a\\b", "1" } }, "has an entry with a backslash in its name: 'a\\b'" },
    { { { "a\nb", "1" } }, "has an entry with a control character in its name: 'a\\x0ab'" },
    { { { "a\0b", "1" } }, "has an entry with a NUL byte in its name: 'a\\x00b'" },
  }
  for i, c in ipairs(cases) do
    local path = write_zip("bad" .. i .. ".zip", c[1])
    local none, err = raymond.zip_open(path)
    T.eq(none, nil, "case " .. i)
    T.has(err, "archive '" .. path .. "' " .. c[2], "case " .. i)
    -- Reading and extracting validate the same way.
    none, err = zip_read(path, "x")
    T.has(err, c[2], "zip_read, case " .. i)
    none, err = zip_extract(path, DIR)
    T.has(err, c[2], "zip_extract, case " .. i)
  end
end)

T.test("a layout error carries its hint", function()
  local path = write_zip("hint.zip", { { "a/x", "1" }, { "b/y", "2" } })
  local _, err = raymond.zip_open(path)
  T.has(err, "\nhint: a workflow archive holds its files at the top level")
end)

T.test("a hash in the name must match the file", function()
  local bytes = zip_bytes({ { "START.md", "hello" } })
  local tmp = write_zip("tmp.zip", { { "START.md", "hello" } })
  local hex = raymond.sha256_file(tmp)

  local good = DIR .. "/flow-" .. hex .. ".zip"
  put(good, bytes)
  T.eq(assert(raymond.zip_open(good)).sha256, hex)
  T.eq(zip_read(good, "START.md"), "hello")

  local wrong = string.rep("0", 64)
  local bad = DIR .. "/flow-" .. wrong .. ".zip"
  put(bad, bytes)
  local none, err = raymond.zip_open(bad)
  T.eq(none, nil)
  T.has(err, "archive '" .. bad .. "' has hash " .. wrong ..
    " in its name but its SHA-256 is " .. hex)

  local long = DIR .. "/flow-" .. hex .. "0.zip"
  put(long, bytes)
  _, err = raymond.zip_open(long)
  T.has(err, "has an ambiguous hash in the name: a run of 65 hex digits")

  local two = DIR .. "/" .. hex .. "-" .. hex .. ".zip"
  put(two, bytes)
  _, err = raymond.zip_open(two)
  T.has(err, "has an ambiguous hash in the name: two runs of 64 hex digits")
end)

T.test("files that are not zip archives", function()
  local path = DIR .. "/text.zip"
  put(path, "just some text, no zip at all\n")
  local none, err = raymond.zip_open(path)
  T.eq(none, nil)
  T.has(err, "'" .. path .. "' is not a readable zip archive: Not a zip archive")

  local bytes = zip_bytes({ { "START.md", "some text to cut short" } })
  local cut = DIR .. "/cut.zip"
  put(cut, bytes:sub(1, #bytes - 10))
  _, err = raymond.zip_open(cut)
  T.has(err, "'" .. cut .. "' is not a readable zip archive: ")

  _, err = raymond.zip_open(DIR .. "/missing.zip")
  T.has(err, "cannot open archive '" .. DIR .. "/missing.zip': No such file or directory")
end)

T.test("damaged data fails zip_read with the CRC", function()
  local bytes = zip_bytes({ { "START.md", "PAYLOAD" } })
  local path = DIR .. "/crc.zip"
  put(path, (bytes:gsub("PAYLOAD", "PAYLOAX")))
  assert(raymond.zip_open(path))
  local none, err = zip_read(path, "START.md")
  T.eq(none, nil)
  T.has(err, "cannot read 'START.md' from archive '" .. path .. "': CRC error")
end)

T.test("zip_extract writes contents and modes, never overwrites", function()
  local path = write_zip("ex.zip", {
    { "flow/", nil }, { "flow/START.md", "# hi\n" }, { "flow/run.sh", "#!/bin/sh\n" },
  })
  local out = assert(raymond.mkdtemp("ray-test-extract-"))
  T.eq(zip_extract(path, out), true)
  T.same(raymond.listdir(out), { "START.md", "run.sh" })
  T.eq(get(out .. "/START.md"), "# hi\n")
  T.eq(get(out .. "/run.sh"), "#!/bin/sh\n")
  T.eq(mode(out .. "/START.md"), "644")
  T.eq(mode(out .. "/run.sh"), "755")

  local none, err = zip_extract(path, out)
  T.eq(none, nil)
  T.has(err, "cannot create '" .. out .. "/START.md': File exists")

  _, err = zip_extract(path, out .. "/nowhere")
  T.has(err, "cannot open directory '" .. out .. "/nowhere': No such file or directory")
  assert(raymond.rmtree(out))
end)

T.test("zip_extract never writes through a folder that is a symbolic link", function()
  local path = write_zip("ln.zip", { { "START.md", "# hi\n" } })
  local outside = assert(raymond.mkdtemp("ray-test-outside-"))
  local link = DIR .. "/extract-link"
  assert(os.execute("ln -s '" .. outside .. "' '" .. link .. "'"))
  local none, err = zip_extract(path, link)
  T.eq(none, nil)
  T.has(err, "cannot open directory '" .. link .. "': it is a symbolic link, and raymond does not write through links")
  T.same(raymond.listdir(outside), {}, "nothing written where the link points")
  assert(raymond.rmtree(link))
  assert(raymond.rmtree(outside))
end)

T.test("mkdtemp makes a private directory under TMPDIR or /tmp", function()
  local a = assert(raymond.mkdtemp("ray-test-mk-"))
  local b = assert(raymond.mkdtemp("ray-test-mk-"))
  local base = (os.getenv("TMPDIR") or ""):gsub("/+$", "")
  if base == "" then base = "/tmp" end
  T.eq(a:sub(1, #base + 13), base .. "/ray-test-mk-")
  T.eq(#a, #base + 13 + 6)
  T.eq(raymond.stat(a), "dir")
  T.eq(mode(a), "700")
  T.eq(a == b, false, "two calls, two directories")
  T.eq(pcall(raymond.mkdtemp, "a/b"), false, "a prefix with '/' raises")
  assert(raymond.rmtree(a))
  assert(raymond.rmtree(b))
end)

T.test("rmtree removes a tree but not what its symlinks point to", function()
  local outside = assert(raymond.mkdtemp("ray-test-outside-"))
  put(outside .. "/keep.txt", "keep")
  local root = assert(raymond.mkdtemp("ray-test-tree-"))
  assert(raymond.mkdir_p(root .. "/a/b/c"))
  put(root .. "/a/b/c/deep.txt", "x")
  put(root .. "/top.txt", "y")
  assert(os.execute("ln -s '" .. outside .. "' '" .. root .. "/a/link'"))
  assert(os.execute("ln -s '" .. outside .. "/keep.txt' '" .. root .. "/filelink'"))

  T.eq(raymond.rmtree(root .. "/"), true)
  T.eq(raymond.stat(root), nil)
  T.eq(get(outside .. "/keep.txt"), "keep")

  -- A symlink given as the path is removed itself.
  local link = DIR .. "/dirlink"
  assert(os.execute("ln -s '" .. outside .. "' '" .. link .. "'"))
  T.eq(raymond.rmtree(link), true)
  T.eq(get(outside .. "/keep.txt"), "keep")
  assert(raymond.rmtree(outside))
  T.eq(raymond.stat(outside), nil)

  local none, err = raymond.rmtree(root)
  T.eq(none, nil)
  T.has(err, "cannot remove '" .. root .. "': No such file or directory")
end)

T.test("rmtree refuses / and the empty path", function()
  local ok, err = pcall(raymond.rmtree, "/")
  T.eq(ok, false)
  T.has(err, "refusing to remove '/'")
  ok, err = pcall(raymond.rmtree, "/tmp/..")
  T.eq(ok, false)
  T.has(err, "refusing to remove '/'")
  ok, err = pcall(raymond.rmtree, "")
  T.eq(ok, false)
  T.has(err, "refusing to remove an empty path")
  ok, err = pcall(raymond.rmtree, DIR .. "/..")
  T.eq(ok, false)
  T.has(err, "refusing to remove '.' or '..'")
end)

T.test("misuse raises", function()
  T.eq(pcall(raymond.zip_open), false)
  T.eq(pcall(raymond.zip_read, DIR .. "/flat.zip"), false)
  T.eq(pcall(raymond.zip_extract, DIR .. "/flat.zip"), false)
end)

assert(raymond.rmtree(DIR))
