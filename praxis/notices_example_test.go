package praxis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"

	"github.com/praxis-tools/praxis/praxis"
)

// A front end makes a Session per client and passes it with every call.
// When a file the client was shown changes on disk by someone else, the
// client's next result tells it so.
func ExampleSession() {
	dir, err := os.MkdirTemp("", "praxis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "list.txt")
	os.WriteFile(file, []byte("milk\neggs\nbread\n"), 0o644)

	eng, err := praxis.New(praxis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	s := praxis.NewSession("client-1")
	defer s.Close()
	ctx := praxis.WithSession(context.Background(), s)

	eng.Catalog().Call(ctx, "read_file", json.RawMessage(`{"path": "list.txt"}`))
	os.WriteFile(file, []byte("milk\nbutter\nbread\n"), 0o644) // an editor saves

	for _, n := range s.Notices() {
		fmt.Println(n.Text)
		fmt.Println(n.Kind, n.Changed)
	}
	// Output:
	// notice: list.txt changed on disk (8275a6023d49f6ea → 2d82f66b49addafe): lines 2 changed
	// changed [[2 2]]
}
