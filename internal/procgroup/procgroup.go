// Package procgroup runs a command as the leader of its own process group
// and ends the group whole, so that what the command starts (a shell's
// children, npx starting the real server) goes with it.
//
// Where there are no process groups (not Unix), a command runs as it is
// and the functions reach the command's own process only.
package procgroup
