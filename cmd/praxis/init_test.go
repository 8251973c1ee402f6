package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// Every praxis process initialises every package linked in, whatever the
// command, so Praxis's own packages do nothing heavy at init: a regular
// expression, a template or a large map is built on first use instead
// (lazyre, sync.OnceValue), and a fixed table is a slice or an array,
// which the compiler lays out in the binary. These bounds leave room for a
// few error values and closures, and none for a regular expression (about
// 80 allocations) or a map of a few dozen entries.
const (
	maxInitAllocs = 32
	maxInitBytes  = 4 << 10
)

// initAllowed are the packages of Praxis that may have an initialiser at
// all: the ones serve runs from its start. Any other package's
// initialiser, however cheap, reads its code and the pages around it from
// the binary into every process: the agent's, the journal's and the
// skills' closures of sync.OnceValue cost an idle server 0.4 MiB.
var initAllowed = map[string]bool{
	"main":                                  true,
	"github.com/praxis-tools/praxis/praxis": true,
	"github.com/praxis-tools/praxis/mcpserver": true,
	"github.com/praxis-tools/praxis/sandbox":   true,
}

func TestInitWork(t *testing.T) {
	cmd := exec.Command(praxisBin, "version")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("praxis version: %v\n%s", err, stderr.Bytes())
	}
	own := 0
	sc := bufio.NewScanner(&stderr)
	for sc.Scan() {
		// init PKG @T ms, C ms clock, B bytes, A allocs
		var pkg string
		var at, clock float64
		var size, allocs int
		if _, err := fmt.Sscanf(sc.Text(), "init %s @%f ms, %f ms clock, %d bytes, %d allocs", &pkg, &at, &clock, &size, &allocs); err != nil {
			continue
		}
		if pkg != "main" && !strings.HasPrefix(pkg, "github.com/praxis-tools/praxis/") {
			continue
		}
		own++
		if !initAllowed[pkg] {
			t.Errorf("%s has an initialiser, which every process runs: lay its variables out statically (lazyre.New, a composite literal) or build them on first use", pkg)
		}
		if allocs > maxInitAllocs || size > maxInitBytes {
			t.Errorf("%s allocates %d bytes in %d allocations at init (at most %d bytes and %d allocations): build it on first use", pkg, size, allocs, maxInitBytes, maxInitAllocs)
		}
	}
	if own == 0 {
		t.Fatalf("no init line of Praxis's packages in:\n%s", stderr.Bytes())
	}
}

// TestNoMethodsByName fails when something linked in calls a method by
// name through reflect (text/template's Execute does): the linker then
// keeps every exported method of every type that could reach an
// interface, 13% of the binary, all of it mapped into every process.
func TestNoMethodsByName(t *testing.T) {
	out, err := exec.Command("go", "tool", "nm", praxisBin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	for line := range strings.Lines(string(out)) {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		if name := f[len(f)-1]; name == "reflect.Value.MethodByName" || name == "reflect.Value.Method" || name == "reflect.(*rtype).MethodByName" {
			t.Errorf("the binary holds %s: something calls methods by name through reflect", name)
		}
	}
}
