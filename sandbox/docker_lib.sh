# Shared by the agent and the command wrapper of isolation docker (see
# docker.go). Bash builtins only: no function here forks, so both keep
# working when the container's pids limit leaves no room for a new process.

# scan ID: sets hit to the live processes whose environment carries
# PRAXIS_COMMAND=ID, and their descendants, leaving out this shell and
# $skip; sets mark to each marked process's ID, for top; sets unsure to
# the processes that may be caught in the middle of an exec: their
# environment reads empty for a moment.
scan() {
	local want=$1 d p line state ppid cmd seen marker cmdline changed=1
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
		# An environment that may not be read stays so, and says nothing.
		if envof "$d" && ((!seen)); then
			# Empty: an exec under way, unless a second look finds it
			# empty again, with the same command line as before it.
			cmdof "$d"
			cmd=$cmdline
			envof "$d"
			if ((!seen)); then
				cmdof "$d"
				[[ -n $cmd && $cmdline == "$cmd" ]] || unsure[$p]=1
			fi
		fi
		if [[ -n $marker ]]; then
			mark[$p]=$marker
			[[ $marker == "$want" ]] && hit[$p]=1
		fi
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

# envof DIR: reads the environment of the process of /proc directory DIR:
# sets seen to 1 when it holds anything, and marker to its PRAXIS_COMMAND,
# if any. Fails when the environment may not be read.
envof() {
	local kv
	seen=0 marker=
	{
		while IFS= read -r -d '' kv; do
			seen=1
			if [[ $kv == PRAXIS_COMMAND=* ]]; then
				marker=${kv#PRAXIS_COMMAND=}
				break
			fi
		done <"$1/environ"
	} 2>/dev/null
}

# cmdof DIR: sets cmdline to the command line of the process of /proc
# directory DIR, its arguments run together: empty while an exec is under
# way.
cmdof() {
	cmdline=
	{ IFS= read -r -N 4096 cmdline <"$1/cmdline"; } 2>/dev/null
}

# sweep ID SIGNAL: sends SIGNAL to the processes of command ID; with KILL,
# again until none is left (a process forking meanwhile adds one), at most
# 200 times. While none is found but some process may be caught in an
# exec, it looks again, for up to two seconds: that process may be one of
# the command's, and an exec takes longer on a loaded machine. (Bash before
# 5.0, without EPOCHREALTIME, looks twenty more times.) Sets n to the
# number of processes it signalled, each counted once: one caught in an
# exec by the first look is found by a later one.
sweep() {
	local p now kills=0 looks=0 start=${EPOCHREALTIME//[!0-9]/}
	local -A sent=()
	while :; do
		scan "$1"
		if ((${#hit[@]})); then
			for p in "${!hit[@]}"; do sent[$p]=1; done
			kill -s "$2" "${!hit[@]}" 2>/dev/null
			[[ $2 == KILL ]] && ((++kills < 200)) || break
		elif ((${#unsure[@]} == 0)); then
			break
		elif [[ -n $start ]]; then
			now=${EPOCHREALTIME//[!0-9]/}
			((now - start < 2000000)) || break
		else
			((++looks <= 20)) || break
		fi
	done
	n=${#sent[@]}
	return 0
}
