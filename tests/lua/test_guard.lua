-- The default hook hooks/guard.lua: deny_commands, allow_commands and
-- protect_paths from frontmatter, called directly with made-up events.
local T = require("testing")
local raymond = require("raymond")
local hooks = require("raymond.hooks")

-- As a run loads it: the embedded copy, in a hook file's room and limits.
local set = assert(hooks.load({ { name = "hooks/guard.lua", source = raymond.embedded("hooks/")["hooks/guard.lua"] } },
  nil, function(_, msg) error("a warning loading hooks/guard.lua: " .. msg) end))
local file = set.files[1]
local guard = { PreToolUse = file.handlers.PreToolUse, tools = file.tools }

local function bash(fm, command, state)
  return guard.PreToolUse({ tool_name = "Bash", tool_input = { command = command }, cwd = "/w/p",
                            state = state or "S.md", frontmatter = fm })
end

-- The reason a Bash command is denied with, or nil when it may run.
local function reason(fm, command)
  local d = bash(fm, command)
  if d == nil then return nil end
  T.eq(d.permissionDecision, "deny", "decision for " .. command)
  return d.permissionDecisionReason
end

local function denied(fm, list)
  for _, c in ipairs(list) do
    if reason(fm, c) == nil then error(string.format("%q was not denied", c), 2) end
  end
end

local function passed(fm, list)
  for _, c in ipairs(list) do
    local r = reason(fm, c)
    if r ~= nil then error(string.format("%q was denied: %s", c, r), 2) end
  end
end

local PUSH = { deny_commands = { "git push*" } }

T.test("deny_commands: a matching command is denied with a reason naming the rule and the state", function()
  T.eq(reason(PUSH, "git push origin main"), 'deny_commands rule "git push*" of S.md forbids: git push origin main')
  T.eq(reason(PUSH, "git push"), 'deny_commands rule "git push*" of S.md forbids: git push')
  passed(PUSH, { "git status", "git pul", "echo git push", "gitpush", "" })
end)

T.test("deny_commands: a pattern matches the whole command, stars standing for any text", function()
  local fm = { deny_commands = { "rm -rf *", "make", "git * --force", "echo \\*" } }
  denied(fm, { "rm -rf /", "rm -rf build dist", "make", "git push --force", "git push origin --force",
               "echo *" })
  passed(fm, { "rm -r x", "make test", "git push --force-with-lease", "git push", "echo x", "sudo-make" })
end)

T.test("deny_commands: each command of a compound line is matched alone", function()
  denied(PUSH, {
    "make && git push", "make || git push", "make; git push", "make | git push", "make & git push",
    "make\ngit push", "make |& git push", "(cd x && git push)", "{ git push; }", "make;git push",
    "if true; then git push; fi", "while true; do git push; done", "! git push", "for x in a; do git push; done",
    "a=$(git push)", "f() { git push; }", "coproc git push", "coproc P { git push; }", "coproc { git push; }",
  })
  T.eq(reason(PUSH, "make test && git push origin HEAD; echo done"),
    'deny_commands rule "git push*" of S.md forbids: git push origin HEAD')
end)

T.test("deny_commands: commands inside $(...), backquotes and <(...) are matched too", function()
  denied(PUSH, { "echo $(git push)", "echo `git push`", 'echo "$(git push)"', 'echo "`git push`"',
                 "echo $(echo $(git push))", "cat <(git push)", "x=$( (git push) )",
                 "cat <<EOF\n$(git push)\nEOF\n" })
  T.eq(reason(PUSH, "echo $(git push -f) done"), 'deny_commands rule "git push*" of S.md forbids: git push -f')
end)

T.test("deny_commands: commands inside $((...)) and ${...} are matched too", function()
  denied(PUSH, { "echo $(( $(git push) + 1 ))", "echo ${x:-$(git push)}", 'echo "${x:-$(git push)}"',
                 "echo ${x:-`git push`}", "echo ${x:-${y:-$(git push)}}", 'echo ${x:-"}"$(git push)}',
                 "cat <<EOF\n$(( $(git push) ))\nEOF\n", "echo $(( `git push` ))" })
  T.eq(reason(PUSH, "echo ${x:-$(git push -f)} done"), 'deny_commands rule "git push*" of S.md forbids: git push -f')
  denied(PUSH, { "echo ${x:-'}'} ; git push", "echo \"${x:-'$(git push)'}\"" })
  passed(PUSH, { "echo $((1 + 2))", "echo ${x:-git push}", "echo ${#x} ${x%%}}", "echo ${x:-'$(git push)'}" })
end)

T.test("deny_commands: separators and substitutions inside single quotes are text", function()
  passed(PUSH, { "echo 'a; git push'", 'echo "a; git push"', 'git commit -m "fix; git push later"',
                 "echo 'git push && x'", "echo '$(git push)'", "echo a\\;git push",
                 "cat <<'EOF'\ngit push\n$(git push)\nEOF\n", "echo $((1 + 2))", "echo hi # ; git push",
                 "git commit -m \"$(cat <<'EOF'\nFix it; git push later\nEOF\n)\"" })
end)

T.test("deny_commands: quotes and escapes are undone, spaces normalised", function()
  denied(PUSH, { 'git "push"', "git 'push' origin", "g\\it push", "  git   push  ", "git \\\n push",
                 "git\tpush" })
end)

T.test("deny_commands: $'...' escapes and $\"...\" quotes are undone as bash does", function()
  denied(PUSH, { "$'\\x67it' push", "$'\\147it' push", "$'\\u0067it' push", "$'g\\x69t' $'\\x70ush'",
                 '$"git" push', 'git $"push" -f', "$'git' push" })
  passed(PUSH, { "$'git\\tpush'", "$'\\\\x67it' push", "echo $'git push'" })
end)

T.test("deny_commands: leading assignments, sudo, env and other wrappers are looked through", function()
  denied(PUSH, { "FOO=1 git push", "FOO=1 BAR='a b' git push", "sudo git push", "sudo -u bob git push",
                 "sudo -E git push", "sudo --user=bob git push", "sudo --user bob git push",
                 "env git push", "env -i FOO=1 git push", "env -u HOME git push", "env -- git push",
                 "command git push", "exec git push", "nohup git push", "time git push", "nice -n 5 git push",
                 "timeout 10 git push", "timeout -s KILL 10 git push", "sudo env FOO=1 git push",
                 "/usr/bin/git push", "sudo /usr/bin/git push", "/usr/bin/sudo git push" })
  T.eq(reason(PUSH, "FOO=1 sudo git push -f"), 'deny_commands rule "git push*" of S.md forbids: FOO=1 sudo git push -f')
  -- env -S splits its value into the command it runs.
  denied(PUSH, { "env -S 'git push'", "env -S'git push origin'", "env --split-string='git push'",
                 "env --split-string 'FOO=1 git push'", "sudo env -S 'git push'" })
  T.eq(reason(PUSH, "env -S 'git push -f'"), "deny_commands rule \"git push*\" of S.md forbids: env -S 'git push -f'")
  -- A pattern may name the wrapper itself.
  denied({ deny_commands = { "sudo *" } }, { "sudo ls", "FOO=1 sudo ls" })
  passed({ deny_commands = { "sudo *" } }, { "ls", "echo sudo ls" })
end)

T.test("deny_commands: a redirection stays part of its command", function()
  denied({ deny_commands = { "make * 2>&1" } }, { "make test 2>&1 | tee log" })
  passed({ deny_commands = { "tee*" } }, { "make test >&2", "make 2>&1", "make &>log" })
end)

T.test("deny_commands: a command nested too deep, or missing, is denied", function()
  local deep = string.rep("$(", 40) .. "ls" .. string.rep(")", 40)
  T.has(reason(PUSH, deep), "nests command substitutions more than 32 deep", "deep")
  local d = guard.PreToolUse({ tool_name = "Bash", tool_input = {}, cwd = "/w", state = "S.md", frontmatter = PUSH })
  T.eq(d.permissionDecisionReason, "the Bash call has no command, so the rules of S.md cannot pass it")
end)

local ALLOW = { allow_commands = { "make *", "git status", "echo *" } }

T.test("allow_commands: only commands matching a pattern run, each part of a line checked", function()
  passed(ALLOW, { "make test", "git status", "make test && git status", "git status | make x",
                  "echo $(git status)", "", "   " })
  T.eq(reason(ALLOW, "rm -rf build"),
    'allow_commands of S.md do not include: rm -rf build; allowed: "make *", "git status", "echo *"')
  T.has(reason(ALLOW, "make test; rm x"), "do not include: rm x;")
  T.has(reason(ALLOW, "echo $(rm x)"), "do not include: rm x;")
  T.has(reason(ALLOW, 'sh -c "make test"'), 'do not include: sh -c "make test";')
  T.has(reason(ALLOW, "sudo make test"), "do not include: sudo make test;")
  T.has(reason(ALLOW, "env make test"), "do not include: env make test;")
  T.has(reason(ALLOW, "/usr/bin/make test"), "do not include: /usr/bin/make test;")
  T.has(reason(ALLOW, "git status --short"), "do not include: git status --short;")
end)

T.test("allow_commands: a leading assignment is part of the command, and needs a pattern that says so", function()
  T.eq(reason(ALLOW, "PATH=/tmp/evil make test"),
    'allow_commands of S.md do not include: PATH=/tmp/evil make test; allowed: "make *", "git status", "echo *"')
  T.has(reason(ALLOW, "LD_PRELOAD=/tmp/x.so make test"), "do not include: LD_PRELOAD=/tmp/x.so make test;")
  T.has(reason(ALLOW, "FOO=1 git status"), "do not include: FOO=1 git status;")
  T.has(reason(ALLOW, "make x; FOO=1 make test"), "do not include: FOO=1 make test;")
  local fm = { allow_commands = { "CC=gcc make *", "make *" } }
  passed(fm, { "CC=gcc make all", "CC='gcc' make all", "make all" })
  T.has(reason(fm, "CC=gcc LD_PRELOAD=x make all"), "do not include: CC=gcc LD_PRELOAD=x make all;")
  -- An assignment alone runs no program, and still needs a pattern.
  T.has(reason(ALLOW, "PATH=/tmp/evil"), "do not include: PATH=/tmp/evil;")
  -- Keywords before a command are no part of it.
  passed(ALLOW, { "if make x; then git status; fi", "! make x" })
end)

T.test("allow_commands: an empty list lets no command run", function()
  T.eq(reason({ allow_commands = {} }, "ls"), "allow_commands of S.md is empty, so no command may run: ls")
end)

T.test("deny_commands wins over allow_commands", function()
  local fm = { allow_commands = { "git *" }, deny_commands = { "git push*" } }
  passed(fm, { "git status", "git pull" })
  T.eq(reason(fm, "git push"), 'deny_commands rule "git push*" of S.md forbids: git push')
end)

T.test("command rules leave other tools alone", function()
  local ev = { tool_name = "Write", tool_input = { file_path = "/w/x" }, cwd = "/w", state = "S.md",
               frontmatter = { allow_commands = {} } }
  T.eq(guard.PreToolUse(ev), nil)
end)

-- protect_paths --------------------------------------------------------

local PROTECT = { protect_paths = { ".env", "secrets/**", "**/*.lock", "/etc/**", "../shared", "vendor" } }

-- The reason a write to `path` is denied with, or nil.  `cwd` is where the
-- model is (the event's cwd), `home` the agent's folder (by default both
-- /w/p).
local function edit(fm, path, tool, cwd, home)
  local key = tool == "NotebookEdit" and "notebook_path" or "file_path"
  local d = guard.PreToolUse({ tool_name = tool or "Write", tool_input = { [key] = path },
                               cwd = cwd or "/w/p", agent = { id = "main", cwd = home or cwd or "/w/p" },
                               state = "S.md", frontmatter = fm })
  return d and d.permissionDecisionReason
end

T.test("protect_paths: a write to a protected path is denied, naming the rule, state, tool and path", function()
  T.eq(edit(PROTECT, "/w/p/.env"), 'protect_paths rule ".env" of S.md forbids Write to: .env')
  T.eq(edit(PROTECT, "secrets/a/key.pem", "Edit"),
    'protect_paths rule "secrets/**" of S.md forbids Edit to: secrets/a/key.pem')
  T.eq(edit(PROTECT, "/etc/passwd", "MultiEdit"), 'protect_paths rule "/etc/**" of S.md forbids MultiEdit to: /etc/passwd')
  T.eq(edit(PROTECT, "vendor/x.ipynb", "NotebookEdit"),
    'protect_paths rule "vendor" of S.md forbids NotebookEdit to: vendor/x.ipynb')
end)

T.test("protect_paths: a path is resolved against cwd, with . and .. taken as written", function()
  for _, p in ipairs({ ".env", "./.env", "sub/../.env", "/w/p/sub/./../.env", "//w//p/.env", "../p/.env",
                       "../../etc/passwd", "a/b/../../secrets/x", "../shared/notes.md", "/w/shared" }) do
    if edit(PROTECT, p) == nil then error(p .. " was not denied") end
  end
  for _, p in ipairs({ "sub/.env", ".env.example", "/w/.env", "src/main.c", "secretsx/a", "/etcx/a",
                       "../other/x", "vendored/x", "/w/p" }) do
    local r = edit(PROTECT, p)
    if r ~= nil then error(p .. " was denied: " .. r) end
  end
end)

T.test("protect_paths: patterns are placed in the agent's folder, a relative path in the model's cwd", function()
  -- The model ran `cd sub`: Claude Code's cwd follows it, the agent's
  -- folder stays /w/p.
  for _, p in ipairs({ "../.env", "/w/p/.env", "../secrets/k", "/w/p/secrets/k", "x/../../.env", "../vendor/y" }) do
    for _, tool in ipairs({ "Write", "MultiEdit" }) do
      if edit(PROTECT, p, tool, "/w/p/sub", "/w/p") == nil then error(p .. " was not denied to " .. tool) end
    end
  end
  T.eq(edit(PROTECT, "../secrets/k", "Write", "/w/p/sub", "/w/p"),
    'protect_paths rule "secrets/**" of S.md forbids Write to: secrets/k')
  for _, p in ipairs({ ".env", "secrets/k", "/w/p/sub/.env" }) do
    local r = edit(PROTECT, p, "Write", "/w/p/sub", "/w/p")
    if r ~= nil then error(p .. " was denied: " .. r) end
  end
  -- A cwd that is not absolute places nothing: the agent's folder stands in.
  T.has(edit(PROTECT, "/w/p/.env", "Write", "sub", "/w/p"), 'rule ".env"')
  T.has(edit(PROTECT, ".env", "Write", "sub", "/w/p"), 'rule ".env"')
  -- An event without the agent's folder places them in its cwd.
  local d = guard.PreToolUse({ tool_name = "Write", tool_input = { file_path = ".env" }, cwd = "/w/p",
                               state = "S.md", frontmatter = PROTECT })
  T.eq(d.permissionDecisionReason, 'protect_paths rule ".env" of S.md forbids Write to: .env')
end)

T.test("protect_paths: * stays within one segment, ** crosses them", function()
  local fm = { protect_paths = { "src/*.lua", "docs/**/draft.md", "**/*.lock", "a*b/c" } }
  for _, p in ipairs({ "src/x.lua", "docs/draft.md", "docs/a/b/draft.md", "Cargo.lock", "x/y/yarn.lock",
                       "axxb/c", "ab/c/d" }) do
    if edit(fm, p) == nil then error(p .. " was not denied") end
  end
  for _, p in ipairs({ "src/x/y.lua", "src/x.luac", "docs/a/draft.md.bak", "x/lock", "a/b/c" }) do
    local r = edit(fm, p)
    if r ~= nil then error(p .. " was denied: " .. r) end
  end
end)

T.test("protect_paths: absolute patterns, ~ and a pattern with .. of its own", function()
  local home = assert(os.getenv("HOME"), "HOME")
  local fm = { protect_paths = { "/w/p/build", "~/.ssh", "x/../y" } }
  T.has(edit(fm, "build/out.o"), 'rule "/w/p/build"')
  T.eq(edit(fm, "/q/build/out.o", nil, "/q"), nil)
  T.has(edit(fm, home .. "/.ssh/id_rsa"), 'rule "~/.ssh"')
  T.has(edit(fm, "y/z"), 'rule "x/../y"')
  T.eq(edit(fm, "x/z"), nil)
end)

T.test("protect_paths: other tools pass, and a call with no path or no cwd is denied", function()
  local d = guard.PreToolUse({ tool_name = "Read", tool_input = { file_path = "/w/p/.env" }, cwd = "/w/p",
                               state = "S.md", frontmatter = PROTECT })
  T.eq(d, nil, "Read")
  T.eq(bash(PROTECT, "cat .env"), nil, "Bash")
  T.eq(edit(PROTECT, nil), "the Write call names no file, so protect_paths of S.md cannot pass it")
  T.eq(guard.PreToolUse({ tool_name = "Write", tool_input = { file_path = "/w/p/x" }, state = "S.md",
                          frontmatter = PROTECT }).permissionDecisionReason,
    "the Write event has no cwd to place protect_paths of S.md in, so it is refused")
  T.has(edit(PROTECT, "/" .. string.rep("a/", 3000)), "longer than 4096 bytes")
end)

-- tools and bad patterns ----------------------------------------------

local function tools(fm) return guard.tools({ state = "S.md", frontmatter = fm }) end

T.test("tools: asks for the tools the state's rules look at, and none without them", function()
  T.eq(tools(nil), nil, "no frontmatter")
  T.eq(tools({ model = "haiku" }), nil, "other fields")
  T.same(tools(PUSH), { "Bash" })
  T.same(tools({ allow_commands = {} }), { "Bash" }, "an empty allow list refuses every command")
  T.eq(tools({ deny_commands = {}, protect_paths = {} }), nil, "empty deny and protect lists")
  T.same(tools({ protect_paths = { ".env" } }), { "Edit|Write|MultiEdit|NotebookEdit" })
  T.same(tools({ protect_paths = { ".env" }, deny_commands = { "x" } }), { "Bash", "Edit|Write|MultiEdit|NotebookEdit" })
  T.eq(guard.PreToolUse({ tool_name = "Bash", tool_input = { command = "git push" }, state = "S.md",
                          frontmatter = { model = "haiku" } }), nil, "a state without rules")
end)

local function raises(fm, want)
  for _, call in ipairs({
    function() return tools(fm) end,
    function() return bash(fm, "ls") end,
  }) do
    local ok, err = pcall(call)
    T.eq(ok, false, "raised for " .. want)
    T.eq(err, want)
  end
end

T.test("a pattern that is not a string, empty or never matching stops the state, naming it", function()
  raises({ deny_commands = { { "git" } } }, "S.md: deny_commands holds a list, not a pattern (write each pattern "
    .. "as a string, quoted if it holds a colon or starts with * or [)")
  raises({ allow_commands = { { a = "b" } } }, "S.md: allow_commands holds a mapping, not a pattern (write each "
    .. "pattern as a string, quoted if it holds a colon or starts with * or [)")
  raises({ protect_paths = { "  " } }, "S.md: protect_paths holds an empty pattern, which matches nothing")
  raises({ deny_commands = { "" } }, "S.md: deny_commands holds an empty pattern, which matches nothing")
  raises({ deny_commands = "git push" }, "S.md: deny_commands must be a list of patterns, got string")
  raises({ protect_paths = { a = "b" } }, "S.md: protect_paths must be a list of patterns, got a mapping")
  raises({ deny_commands = { "make && git push" } }, 'S.md: deny_commands pattern "make && git push" can never '
    .. "match: a command line is split at ;, &, |, &&, || and line ends, and each command is matched alone; "
    .. "give each its own pattern")
  raises({ allow_commands = { "make; make install" } }, 'S.md: allow_commands pattern "make; make install" can '
    .. "never match: a command line is split at ;, &, |, &&, || and line ends, and each command is matched "
    .. "alone; give each its own pattern")
  raises({ protect_paths = { "src/*/../x" } },
    'S.md: protect_paths pattern "src/*/../x" can never match: a .. after a wildcard names no one folder')
end)

T.test("patterns with quotes, substitutions and redirections of one command are fine", function()
  for _, p in ipairs({ 'git commit -m "a; b"*', "echo $(date)*", "make 2>&1", "ls > out" }) do
    T.same(tools({ deny_commands = { p } }), { "Bash" }, p)
  end
  denied({ deny_commands = { 'git commit -m "a; b"*' } }, { 'git commit -m "a; b" --amend' })
  denied({ deny_commands = { "echo $(date)*" } }, { "echo $(date) now" })
end)

T.test("through the engine: the plan asks guard.lua only for the tools a state's rules need", function()
  T.same(set.frontmatter, { deny_commands = "list", allow_commands = "list", protect_paths = "list" })
  T.eq(hooks.tool_plan(set, { state = "S.md", frontmatter = {} }), nil, "no rules: no plan, no settings")
  local plan = assert(hooks.tool_plan(set, { state = "S.md", frontmatter = PUSH }))
  T.same(plan.PreToolUse[1].tools, { "Bash" })
  local _, err = hooks.tool_plan(set, { state = "S.md", frontmatter = { deny_commands = { "" } } })
  T.has(err, "S.md: deny_commands holds an empty pattern", "a bad pattern fails the plan")
  local d = hooks.emit(set, "PreToolUse", { tool_name = "Bash", tool_input = { command = "git push" },
                                            cwd = "/w", state = "S.md", frontmatter = PUSH })
  T.eq(d.permissionDecision, "deny")
  T.eq(d.permissionDecisionReason, 'deny_commands rule "git push*" of S.md forbids: git push')
end)

T.test("lint: each bad pattern is an error on its field's line; good ones and --no-default-hooks say nothing", function()
  local analyse = require("raymond.analyse")
  local lint = require("raymond.lint")
  local dir = T.tmpdir()
  T.put(dir .. "/START.md", table.concat({
    "---",
    'deny_commands: ["git push*", "make && git push", ["x"], ""]',
    "allow_commands:",
    '  - "make *"',
    "  - {a: b}",
    'protect_paths: ["secrets/**", "a/*/../b", "  "]',
    "---",
    "Work. <result>ok</result>", "" }, "\n"))
  T.put(dir .. "/GOOD.md", '---\ndeny_commands: ["git push*"]\nprotect_paths: [".env"]\n---\nWork. <result>ok</result>\n')
  local function found(opts)
    local wf = assert(analyse.load(dir, "/", opts))
    local got = {}
    for _, d in ipairs(lint.sort(lint.run(wf))) do
      if d.check == "invalid-guard-pattern" then
        T.eq(d.severity, "error")
        got[#got + 1] = string.format("%s:%d: %s", d.file:match("[^/]*$"), d.line, d.message)
      end
    end
    analyse.close(wf)
    return got
  end
  local holds = "not a pattern (write each pattern as a string, quoted if it holds a colon or starts with * or [)"
  T.same(found(), {
    "START.md:2: deny_commands holds a list, " .. holds,
    "START.md:2: deny_commands holds an empty pattern, which matches nothing",
    'START.md:2: deny_commands pattern "make && git push" can never match: a command line is split at ;, &, |, '
      .. "&&, || and line ends, and each command is matched alone; give each its own pattern",
    "START.md:3: allow_commands holds a mapping, " .. holds,
    "START.md:6: protect_paths holds an empty pattern, which matches nothing",
    'START.md:6: protect_paths pattern "a/*/../b" can never match: a .. after a wildcard names no one folder',
  })
  T.same(found({ no_default_hooks = true }), {}, "without the default hooks")
end)
