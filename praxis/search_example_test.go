package praxis_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"

	"github.com/praxis-tools/praxis/praxis"
)

// A front end lists the memory notes, for instance as memory://KEY
// resources, and reads one when asked.
func ExampleEngine_MemoryKeys() {
	dir, err := os.MkdirTemp("", "praxis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	eng, err := praxis.New(praxis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	eng.Catalog().Call(context.Background(), "write_memory",
		json.RawMessage(`{"key": "project/build", "content": "# Build\nRun make first.\n"}`))

	notes, err := eng.MemoryKeys()
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range notes {
		text, err := eng.ReadMemory(n.Key)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("memory://%s (%d bytes, %q)\n%s", n.Key, n.Size, n.FirstLine, text)
	}
	_, err = eng.ReadMemory("missing")
	fmt.Println(praxis.CodeOf(err))
	// Output:
	// memory://project/build (24 bytes, "# Build")
	// # Build
	// Run make first.
	// E_NOT_FOUND
}

// grep shows each hit in hashline form, with the file's version, so an
// edit can follow without reading the file again.
func Example_grep() {
	dir, err := os.MkdirTemp("", "praxis-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.WriteFile(dir+"/main.go", []byte("package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n"), 0o644)
	eng, err := praxis.New(praxis.Options{Workspace: dir})
	if err != nil {
		log.Fatal(err)
	}
	defer eng.Close()
	res, _ := eng.Catalog().Call(context.Background(), "grep", json.RawMessage(`{"pattern": "println"}`))
	fmt.Print(res.Text)
	// Output:
	// # 1 matching lines in 1 files
	// # main.go version=e2a19f46ab264559 matches=1
	// 4:93b752c1|	println("hi")
}
