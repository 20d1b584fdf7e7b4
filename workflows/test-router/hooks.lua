-- Route on the project's tests, not on the model's word: when IMPLEMENT
-- says it is done, run them; if they fail, go back to IMPLEMENT with the
-- end of their output as its input.
--
-- The test command is RAYMOND_TEST_COMMAND (default: make test), run in
-- the directory raymond was started from.

local function test_command()
  local cmd = os.getenv("RAYMOND_TEST_COMMAND") or "make test"
  local argv = {}
  for word in cmd:gmatch("%S+") do argv[#argv + 1] = word end
  return argv
end

return {
  PreTransition = function(ev)
    if ev.state ~= "IMPLEMENT.md" or ev.transition.target ~= "COMMIT.md" then return nil end
    local argv = test_command()
    argv.timeout = 900
    local r, err = raymond.exec(argv)
    if not r then
      return { transition = { tag = "goto", target = "IMPLEMENT", input = "the tests could not run: " .. err },
               reason = "the tests could not run" }
    end
    if r.code == 0 then
      raymond.log("tests pass")
      return nil
    end
    raymond.log("tests fail (exit " .. tostring(r.code) .. "); back to IMPLEMENT")
    local out = (r.stdout .. r.stderr):sub(-3000)
    return { transition = { tag = "goto", target = "IMPLEMENT", input = "The tests fail:\n" .. out },
             reason = "the tests fail (exit " .. tostring(r.code) .. ")" }
  end,
}
