package praxis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"regexp"

	"github.com/praxis-tools/praxis/praxis"
)

// An engine confines every tool to its workspace; callers reach the tools
// through its catalog, as the MCP server and the agent loop do.
func Example() {
	dir, err := os.MkdirTemp("", "praxis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "greet.txt"), []byte("hello\nworld\n"), 0o644)

	eng, err := praxis.New(praxis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()

	read, _ := eng.Catalog().Call(ctx, "read_file", json.RawMessage(`{"path": "greet.txt"}`))
	fmt.Print(read.Text)

	// Edit line 2 by its anchor from the read.
	anchor := regexp.MustCompile(`(?m)^2:[0-9a-f]{8}`).FindString(read.Text)
	args, _ := json.Marshal(map[string]any{
		"path": "greet.txt",
		"ops":  []any{map[string]any{"op": "replace_line", "tag": anchor, "new_text": "gophers"}},
	})
	edit, _ := eng.Catalog().Call(ctx, "edit_file", args)
	fmt.Print(edit.Text)

	// The same anchor is now stale: the call fails before anything is written.
	again, _ := eng.Catalog().Call(ctx, "edit_file", args)
	fmt.Println(again.IsError, again.Code)
	// Output:
	// # greet.txt version=e55980c788fb1801 lines=1-2 of 2 eol=lf
	// 1:7feab20a|hello
	// 2:8d1d9a46|world
	// edited greet.txt: version e55980c788fb1801 -> 17a0ee4bc3ba4513, +1 -1 lines, 2 lines now
	// 1:7feab20a|hello
	// 2:1ea6fa57|gophers
	// true E_ANCHOR_STALE
}
