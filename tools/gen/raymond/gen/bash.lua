-- raymond.gen.bash: the bash completion of raymond, from the model
-- (raymond.gen.model): commands, each command's options and arguments,
-- option values, workflow paths, and the ids of the project's runs.

local shell = require("raymond.gen.shell")

local LOGIC = [=[
# The full name of option $1 among the names in $2 (an unambiguous
# abbreviation stands for the option it begins, as raymond reads it).
_raymond_resolve() {
	local name=${1%%=*} o found= n=0
	for o in $2; do
		[[ $o == "$name" ]] && { REPLY=$o; return; }
		[[ $o == "$name"* ]] && { found=$o; n=$((n + 1)); }
	done
	((n == 1)) && REPLY=$found || REPLY=$name
}

# Add the completions of kind $1 (see _raymond_arguments) for word $2.
_raymond_complete() {
	local kind=$1 cur=$2 ext
	case $kind in
	workflow)
		compopt -o filenames 2>/dev/null
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur")
		for ext in zip md sh; do
			mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -X "!*.$ext" -- "$cur")
		done ;;
	file)
		compopt -o filenames 2>/dev/null
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -f -- "$cur") ;;
	dir)
		compopt -o filenames 2>/dev/null
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -d -- "$cur") ;;
	run)
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$(_raymond_runs)" -- "$cur") ;;
	command)
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "$_raymond_commands" -- "$cur") ;;
	values\ *)
		mapfile -t -O "${#COMPREPLY[@]}" COMPREPLY < <(compgen -W "${kind#values }" -- "$cur") ;;
	esac
}

_raymond() {
	local cur=${COMP_WORDS[COMP_CWORD]} cmd= word opts i=1 n=0 expect= ended= REPLY
	local -a kinds
	COMPREPLY=()
	# A first word naming a command is that command; else the old form.
	if ((COMP_CWORD > 1)) && [[ " $_raymond_commands " == *" ${COMP_WORDS[1]} "* ]]; then
		cmd=${COMP_WORDS[1]}
		i=2
	fi
	_raymond_options "$cmd"
	opts=$REPLY
	_raymond_arguments "$cmd"
	read -ra kinds <<<"$REPLY"
	# Count the arguments before the cursor, skipping options and their
	# values.  bash splits --opt=value into three words: --opt, = and value.
	for ((; i < COMP_CWORD; i++)); do
		word=${COMP_WORDS[i]}
		if [[ -n $expect ]]; then
			[[ $word == = ]] || expect=
		elif [[ -z $ended && $word == -- ]]; then
			ended=1
		elif [[ -z $ended && $word == -?* ]]; then
			_raymond_resolve "$word" "$opts"
			_raymond_value "$REPLY" "$cmd"
			[[ -n $REPLY && $REPLY != flag ]] && expect=1
		else
			n=$((n + 1))
		fi
	done
	if [[ -n $expect ]]; then
		word=${COMP_WORDS[COMP_CWORD - 1]}
		[[ $word == = ]] && word=${COMP_WORDS[COMP_CWORD - 2]}
		[[ $cur == = ]] && cur=
		_raymond_resolve "$word" "$opts"
		_raymond_value "$REPLY" "$cmd"
		_raymond_complete "$REPLY" "$cur"
	elif [[ -z $ended && $cur == -* ]]; then
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
	else
		# The old form's first word is a command or a workflow.
		[[ -z $cmd ]] && ((COMP_CWORD == 1)) && _raymond_complete command "$cur"
		_raymond_complete "${kinds[n]}" "$cur"
	fi
}

complete -F _raymond raymond
]=]

return function(m)
  local out = { "# bash completion for raymond", shell.header }
  local names = {}
  for i, c in ipairs(m.commands) do names[i] = c.name end
  out[#out + 1] = string.format("_raymond_commands='%s'\n", table.concat(names, " "))
  out[#out + 1] = "# The options of command $1 ('' is the old form, which takes them all)."
  out[#out + 1] = "_raymond_options() {"
  out[#out + 1] = "\tcase $1 in"
  for _, c in ipairs(m.commands) do
    out[#out + 1] = string.format("\t%s) REPLY='--%s' ;;", c.name, table.concat(shell.option_names(m, c), " --"))
  end
  out[#out + 1] = string.format("\t*) REPLY='--%s' ;;", table.concat(shell.option_names(m), " --"))
  out[#out + 1] = "\tesac"
  out[#out + 1] = "}\n"
  shell.data(out, m)
  shell.runs(out)
  out[#out + 1] = LOGIC
  return table.concat(out, "\n")
end
