//go:build linux

package sandbox_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/praxis-tools/praxis/sandbox"
)

func Example() {
	ws, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)

	policy := sandbox.DefaultPolicy(ws)
	policy.Limits.Processes = 100
	r, err := sandbox.New(policy)
	if err != nil {
		log.Fatal(err) // with isolation bwrap: ErrUnavailable when bwrap cannot run here
	}
	res, err := r.Run(context.Background(), sandbox.Command{
		Script:  "echo hello; echo oops >&2; exit 3",
		Timeout: 10 * time.Second,
	})
	if err != nil {
		log.Fatal(err) // refused: ErrDisabled, ErrOutside, ErrTimeoutTooLong
	}
	fmt.Printf("exit %d, stdout %q, stderr %q\n", res.ExitCode, res.Stdout.Text, res.Stderr.Text)
	// Output: exit 3, stdout "hello\n", stderr "oops\n"
}

// A background command: read its output while it runs, then end it.
func ExampleProcess() {
	ws, err := os.MkdirTemp("", "workspace")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(ws)
	r, err := sandbox.New(sandbox.DefaultPolicy(ws))
	if err != nil {
		log.Fatal(err)
	}
	p, err := r.Start(context.Background(), sandbox.Command{Script: "echo ready; exec sleep 300"})
	if err != nil {
		log.Fatal(err)
	}
	for p.Written() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	stdout, _, next := p.Output(0)
	fmt.Printf("%q, next read from %d\n", stdout.Text, next)
	p.Kill()
	res := p.Result()
	fmt.Println("killed:", res.Killed, "signal:", res.Signal)
	// Output:
	// "ready\n", next read from 6
	// killed: true signal: terminated
}
