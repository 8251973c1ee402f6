# The agent of isolation docker: the main process of a session's container
# (under the engine's init). Praxis holds its standard input and output
# open; it reads one request a line and answers one line:
#
#   stat [ID]      -> stat PIDS_MAX OOM_KILL LEFT   the cgroup's event
#                     counters, and how many processes command ID left
#                     behind (its wrapper killed them)
#   kill ID SIG    -> kill N                   signal command ID's processes
#   top            -> top ID                   the command with most processes
#
# End of input means Praxis is gone: the agent exits and the container
# stops (and is removed by the engine). Needs docker_lib.sh before it.
cg=/sys/fs/cgroup
pids_events=$cg/pids.events
[[ -r $pids_events ]] || pids_events=$cg/pids/pids.events
mem_events=$cg/memory.events
[[ -r $mem_events ]] || mem_events=$cg/memory/memory.oom_control

# counter FILE KEY: sets v to the value of KEY in FILE, 0 when absent.
counter() {
	local k x
	v=0
	{
		while read -r k x; do
			[[ $k == "$2" ]] && v=$x
		done <"$1"
	} 2>/dev/null
}

echo ready
while read -r op a b; do
	case $op in
	stat)
		counter "$pids_events" max
		pm=$v
		counter "$mem_events" oom_kill
		left=0
		if [[ $a =~ ^[0-9a-f]+$ ]]; then
			{ read -r left <"/tmp/.praxis-left-$a"; } 2>/dev/null
			[[ $left =~ ^[0-9]+$ ]] || left=0
		fi
		echo "stat $pm $v $left"
		;;
	kill)
		sweep "$a" "$b"
		echo "kill $n"
		;;
	top)
		scan ""
		unset count
		declare -A count=()
		best=- most=0
		for p in "${!mark[@]}"; do
			id=${mark[$p]}
			# Marks are Praxis's hex ids; anything else was set by a
			# command and must not reach an arithmetic context.
			[[ $id =~ ^[0-9a-f]+$ ]] || continue
			((count[$id]++))
			if ((count[$id] > most)); then
				most=${count[$id]} best=$id
			fi
		done
		echo "top $best"
		;;
	*)
		echo "error unknown request"
		;;
	esac
done
