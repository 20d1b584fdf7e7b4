-- raymond.gen.shell: what the bash and zsh completions share: the data
-- of the model (raymond.gen.model) as shell functions both shells read
-- alike, and the function listing the runs of the project.
--
--   _raymond_arguments CMD   REPLY: the kinds of CMD's arguments, in order
--                            ('' is the old form, raymond WORKFLOW ...)
--   _raymond_value OPTION CMD
--                            REPLY: the kind of OPTION's value under
--                            command CMD: "flag" when it takes none,
--                            "values A B ..." for a list, nothing for an
--                            unknown option
--   _raymond_runs            the ids of the project's runs, one a line

local M = {}

M.header = "# Generated from raymond's command table by tools/gen; do not edit.\n"

-- A function setting REPLY by a case statement on its first argument.
local function case(out, name, comment, rows, subject)
  out[#out + 1] = "# " .. comment
  out[#out + 1] = name .. "() {"
  out[#out + 1] = "\tcase " .. (subject or "$1") .. " in"
  for _, r in ipairs(rows) do out[#out + 1] = string.format("\t%s) REPLY='%s' ;;", r[1], r[2]) end
  out[#out + 1] = "\t*) REPLY= ;;"
  out[#out + 1] = "\tesac"
  out[#out + 1] = "}"
  out[#out + 1] = ""
end

function M.data(out, m)
  local rows = { { "''", "workflow" } }
  for _, c in ipairs(m.commands) do
    local kinds = {}
    for i, a in ipairs(c.args) do kinds[i] = a.kind end
    rows[#rows + 1] = { c.name, table.concat(kinds, " ") }
  end
  case(out, "_raymond_arguments", "The kinds of command $1's arguments, in order ('' is the old form).", rows)
  local function value(o) return o.kind == "values" and "values " .. table.concat(o.values, " ") or o.kind end
  rows = {}
  for _, c in ipairs(m.commands) do
    for _, o in ipairs(c.own) do rows[#rows + 1] = { c.name .. ":--" .. o.name, value(o) } end
  end
  for _, o in ipairs(m.options) do rows[#rows + 1] = { "*:--" .. o.name, value(o) } end
  case(out, "_raymond_value", "The kind of option $1's value under command $2: flag when it takes none.", rows, "$2:$1")
end

-- The option names command `c` takes; without `c`, the old form's: all.
function M.option_names(m, c)
  return c and c.options or m.old_form
end

-- `prologue` is a first line for the shell (zsh: no error on an empty glob).
function M.runs(out, prologue)
  out[#out + 1] = [=[
# The ids of this project's runs, one a line: .raymond/state/*.json in the
# nearest folder up from here holding .raymond, looking no further than
# the project root (a folder holding .git) or /, as raymond does.
_raymond_runs() {]=]
  if prologue then out[#out + 1] = "\t" .. prologue end
  out[#out + 1] = [=[
	local dir=$PWD f
	while :; do
		if [[ -d $dir/.raymond ]]; then
			for f in "$dir"/.raymond/state/*.json; do
				[[ -f $f ]] || continue
				f=${f##*/}
				printf '%s\n' "${f%.json}"
			done
			return 0
		fi
		[[ -e $dir/.git || $dir == / ]] && return 0
		dir=${dir%/*}
		[[ -n $dir ]] || dir=/
	done
}
]=]
end

return M
