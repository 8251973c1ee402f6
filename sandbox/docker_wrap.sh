# The wrapper of each command under isolation docker, run by exec with
# PRAXIS_COMMAND set to the command's id; $1 is the command's script. When
# the command's shell exits, it kills what the command left running (so
# that its output streams end) and notes how many there were, then exits
# with the shell's status. Needs
# docker_lib.sh before it.
bash -c "$1"
rc=$?
sweep "$PRAXIS_COMMAND" KILL
# The count of leftovers, for the agent's stat request about this command.
((n > 0)) && echo "$n" >"/tmp/.praxis-left-$PRAXIS_COMMAND"
exit $rc
