-- A release gate: the agent may run any command its permission mode
-- allows, but `git push` only in RELEASE.md.  The hook sees every Bash
-- call before it runs (PreToolUse); a denied call does not run, and the
-- model reads the reason as the command's result.
return {
  -- Only Bash calls come here: other tools never wait for this hook.
  tools = { "Bash" },

  PreToolUse = function(ev)
    -- Counted in agent.data, which is saved before the call runs, so the
    -- count survives a crash and --resume.
    ev.agent.data.bash_calls = (ev.agent.data.bash_calls or 0) + 1
    local command = ev.tool_input.command or ""
    if command:find("git%s+push") and ev.state ~= "RELEASE.md" then
      return {
        permissionDecision = "deny",
        permissionDecisionReason = "pushing is only allowed in RELEASE: commit here, "
          .. "end with <goto>RELEASE</goto>, and push there",
      }
    end
  end,
}
