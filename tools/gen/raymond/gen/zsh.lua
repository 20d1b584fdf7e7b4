-- raymond.gen.zsh: the zsh completion of raymond, from the model
-- (raymond.gen.model): commands and options with their summaries, each
-- command's arguments, option values, workflow paths and run ids.

local shell = require("raymond.gen.shell")

local LOGIC = [=[
# The full name of option $1 among the names $2...: an unambiguous
# abbreviation stands for the option it begins, as raymond reads it.
_raymond_resolve() {
	local name=${1%%=*} o found=
	local -i n=0
	shift
	for o in "$@"; do
		[[ $o == "$name" ]] && { REPLY=$o; return 0 }
		[[ $o == "$name"* ]] && { found=$o; n+=1 }
	done
	(( n == 1 )) && REPLY=$found || REPLY=$name
}

# Complete a word of kind $1 (see _raymond_arguments).
_raymond_complete() {
	local -a reply runs
	case $1 in
	workflow) _files -g '*.(zip|md|sh)' ;;
	file) _files ;;
	dir) _files -/ ;;
	run)
		runs=( ${(f)"$(_raymond_runs)"} )
		compadd -a runs ;;
	command)
		_raymond_commands
		_describe -t commands command reply ;;
	values\ *) compadd -- ${=${1#values }} ;;
	esac
}

_raymond() {
	local cmd= word REPLY expect= ended=
	local -i i=2 n=0
	local -a reply opts names kinds
	# A first word naming a command is that command; else the old form.
	if (( CURRENT > 2 )); then
		_raymond_commands
		for word in ${reply%%:*}; do
			[[ $word == "$words[2]" ]] && { cmd=$word; i=3 }
		done
	fi
	_raymond_options "$cmd"
	opts=( $reply )
	names=( ${opts%%:*} )
	_raymond_arguments "$cmd"
	kinds=( ${=REPLY} )
	# Count the arguments before the cursor, skipping options and their values.
	for (( ; i < CURRENT; i++ )); do
		word=$words[i]
		if [[ -n $expect ]]; then
			expect=
		elif [[ -z $ended && $word == -- ]]; then
			ended=1
		elif [[ -z $ended && $word == -?* ]]; then
			[[ $word == *=* ]] && continue
			_raymond_resolve "$word" $names
			_raymond_value "$REPLY" "$cmd"
			[[ -n $REPLY && $REPLY != flag ]] && expect=1
		else
			n+=1
		fi
	done
	word=$words[CURRENT]
	if [[ -n $expect ]]; then
		_raymond_resolve "$words[CURRENT-1]" $names
		_raymond_value "$REPLY" "$cmd"
		_raymond_complete "$REPLY"
	elif [[ -z $ended && $word == --*=* ]]; then
		_raymond_resolve "$word" $names
		_raymond_value "$REPLY" "$cmd"
		compset -P '*='
		_raymond_complete "$REPLY"
	elif [[ -z $ended && $word == -* ]]; then
		_describe -t options option opts
	else
		# The old form's first word is a command or a workflow.
		[[ -z $cmd ]] && (( CURRENT == 2 )) && _raymond_complete command
		_raymond_complete "$kinds[n+1]"
	fi
}

# Loaded from fpath, this file is the body of _raymond; sourced, it
# registers _raymond with compdef.
if [[ $zsh_eval_context[-1] == loadautofunc ]]; then
	_raymond "$@"
else
	compdef _raymond raymond
fi
]=]

-- `s` as one zsh word in single quotes.
local function quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- "NAME:first line of text", quoted.
local function described(name, text)
  return quote(name .. ":" .. text:gsub("\n", " "))
end

local function options_case(out, m)
  out[#out + 1] = "# The options of command $1 ('' is the old form, which takes them all), as --name:summary."
  out[#out + 1] = "_raymond_options() {"
  out[#out + 1] = "\tcase $1 in"
  local function row(label, names, by_name)
    local items = {}
    for i, name in ipairs(names) do items[i] = described("--" .. name, by_name[name].help) end
    out[#out + 1] = string.format("\t%s) reply=(\n\t\t%s\n\t) ;;", label, table.concat(items, "\n\t\t"))
  end
  for _, c in ipairs(m.commands) do row(c.name, shell.option_names(m, c), c.by_name) end
  row("*", shell.option_names(m), m.by_name)
  out[#out + 1] = "\tesac"
  out[#out + 1] = "}\n"
end

return function(m)
  local out = { "#compdef raymond", "# zsh completion for raymond", shell.header }
  local items = {}
  for i, c in ipairs(m.commands) do items[i] = described(c.name, c.summary) end
  out[#out + 1] = "# The commands, as name:summary."
  out[#out + 1] = string.format("_raymond_commands() {\n\treply=(\n\t\t%s\n\t)\n}\n", table.concat(items, "\n\t\t"))
  options_case(out, m)
  shell.data(out, m)
  shell.runs(out, "setopt local_options null_glob")
  out[#out + 1] = LOGIC
  return table.concat(out, "\n")
end
