-- raymond.launchers.local: the command runs here, as a child of raymond
-- (the default launcher).
return { name = "local", kind = "local" }
