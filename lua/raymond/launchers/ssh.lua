-- raymond.launchers.ssh: the command runs on another machine through ssh
-- (stream kind, raymond.launchers.stream): the task script goes to a
-- remote `sh -s` on ssh's stdin, so no variable's value is ever on a
-- command line.  The remote shell's command line carries the job's name,
-- which is how the cancel finds it after a stop: the bracket keeps pkill
-- from matching the shell that runs pkill itself.  Needs host: in the
-- config (launchers: {box: {base: ssh, host: build1}}).

return {
  name = "ssh", kind = "stream", needs = "host",
  run = { "ssh", "-T", "-o", "BatchMode=yes", "{host}", "sh -s RAYMOND_JOB={job}" },
  cancel = { "ssh", "-o", "BatchMode=yes", "{host}", "pkill -TERM -f -- '[R]AYMOND_JOB={job}'" },
}
