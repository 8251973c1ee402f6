package journal_test

import (
	"fmt"
	"log"
	"os"

	"github.com/praxis-tools/praxis/agent/journal"
)

func Example() {
	dir, err := os.MkdirTemp("", "sessions-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	w, err := journal.Create(dir, "s1")
	if err != nil {
		log.Fatal(err)
	}
	w.Append(map[string]string{"type": "run_start", "task": "fix the build"})
	w.Append(map[string]string{"type": "run_complete", "stop_reason": "completed"})
	w.Sync() // at a step boundary
	w.Close()

	l, err := journal.Read(dir, "s1")
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range l.Records {
		fmt.Println(r.Seq, string(r.Event))
	}
	// Output:
	// 1 {"task":"fix the build","type":"run_start"}
	// 2 {"stop_reason":"completed","type":"run_complete"}
}
