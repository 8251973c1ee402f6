# Shared by the agent and the command wrapper of isolation docker (see
# docker.go). Bash builtins only: no function here forks, so both keep
# working when the container's pids limit leaves no room for a new process.

# scan ID: sets hit to the live processes whose environment carries
# PRAXIS_COMMAND=ID, and their descendants, leaving out this shell and
# $skip; sets mark to each marked process's ID, for top; sets unsure to
# the processes whose environment read empty: a process in the middle of
# an exec shows none for a moment.
scan() {
	local want="PRAXIS_COMMAND=$1" d p line state ppid kv seen changed=1
	unset hit par mark unsure
	declare -gA hit=() par=() mark=() unsure=()
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		((p == $$ || p == ${skip:-0})) && continue
		{ read -r line <"$d/stat"; } 2>/dev/null || continue
		line=${line##*) }
		state=${line%% *}
		line=${line#* }
		ppid=${line%% *}
		[[ $state == [ZX] ]] && continue
		par[$p]=$ppid
		seen=0
		{
			while IFS= read -r -d '' kv; do
				seen=1
				if [[ $kv == PRAXIS_COMMAND=* ]]; then
					mark[$p]=${kv#PRAXIS_COMMAND=}
					[[ $kv == "$want" ]] && hit[$p]=1
					break
				fi
			done <"$d/environ"
		} 2>/dev/null
		((seen)) || unsure[$p]=1
	done
	while ((changed)); do
		changed=0
		for p in "${!par[@]}"; do
			if [[ -z ${hit[$p]} && -n ${hit[${par[$p]}]} ]]; then
				hit[$p]=1
				changed=1
			fi
		done
	done
}

# sweep ID SIGNAL: sends SIGNAL to the processes of command ID; with KILL,
# again until none is left (a process forking meanwhile adds one). While
# none is found but some process's environment read empty, it looks
# again, a few times: that process may be one of the command's, caught
# in an exec. Sets n to the number of processes it signalled, each counted
# once: one caught in an exec by the first look is found by a later one.
sweep() {
	local round p
	local -A sent=()
	for round in {1..200}; do
		scan "$1"
		if ((${#hit[@]})); then
			for p in "${!hit[@]}"; do sent[$p]=1; done
			kill -s "$2" "${!hit[@]}" 2>/dev/null
			[[ $2 == KILL ]] || break
		elif ((${#unsure[@]} == 0 || round > 20)); then
			break
		fi
	done
	n=${#sent[@]}
	return 0
}
