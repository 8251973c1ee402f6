// Package dockerimage provides the image the tests of isolation docker run
// commands in: the host's bash and a few programs with their libraries,
// imported into the engine as a root file system, so that no registry is
// needed. The CI setup starts a Docker engine and sets
// PRAXIS_REQUIRE_DOCKER=1; elsewhere a test that needs an engine is skipped
// when none answers.
package dockerimage

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/moby/moby/client"
)

// Name is the test image's reference. Change its tag when Programs change.
const Name = "praxis-sandbox-test:5"

// Programs are the host programs the image holds, at their host paths and
// under /usr/bin.
var Programs = []string{"bash", "sleep", "cat", "id", "stat", "ls", "head", "tail", "touch", "env", "setsid", "mkdir", "cp", "chmod", "mv"}

// build imports the image once per test binary.
var build = sync.OnceValue(func() error { return buildImage() })

// Image returns Name, importing the image first when the engine lacks it.
// When no engine answers at DOCKER_HOST (or the local socket) the test is
// skipped, or fails if PRAXIS_REQUIRE_DOCKER is set.
func Image(t testing.TB) string {
	t.Helper()
	cli, err := client.New(client.FromEnv)
	if err == nil {
		defer cli.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = cli.Ping(ctx, client.PingOptions{NegotiateAPIVersion: true})
		cancel()
	}
	if err != nil {
		if os.Getenv("PRAXIS_REQUIRE_DOCKER") != "" {
			t.Fatalf("PRAXIS_REQUIRE_DOCKER is set but no Docker engine answers: %v", err)
		}
		t.Skipf("no Docker engine answers (start dockerd, or set DOCKER_HOST): %v", err)
	}
	if err := build(); err != nil {
		t.Fatalf("building the test image: %v", err)
	}
	return Name
}

func buildImage() error {
	cli, err := client.New(client.FromEnv)
	if err != nil {
		return err
	}
	defer cli.Close()
	ctx := context.Background()
	if _, err := cli.ImageInspect(ctx, Name); err == nil {
		return nil
	}
	files := map[string]bool{}
	libRE := regexp.MustCompile(`/[^ ]+`)
	for _, name := range Programs {
		path, err := exec.LookPath(name)
		if err != nil {
			return err
		}
		path, _ = filepath.Abs(path)
		out, err := exec.Command("ldd", path).Output()
		if err != nil {
			return fmt.Errorf("ldd %s: %v", path, err)
		}
		files[path] = true
		files["/usr/bin/"+name] = true
		for _, lib := range libRE.FindAllString(string(out), -1) {
			files[lib] = true
		}
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	dirs := map[string]bool{}
	for _, path := range slices.Sorted(func(yield func(string) bool) {
		for f := range files {
			if !yield(f) {
				return
			}
		}
	}) {
		var parents []string
		for dir := filepath.Dir(path); dir != "/" && !dirs[dir]; dir = filepath.Dir(dir) {
			dirs[dir] = true
			parents = append(parents, dir)
		}
		for _, dir := range slices.Backward(parents) {
			if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir[1:] + "/", Mode: 0o755}); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(path) // follows symlinks: the image holds copies
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: path[1:], Mode: 0o755, Size: int64(len(data))}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageImport(ctx, client.ImageImportSource{Source: &buf, SourceName: "-"}, Name, client.ImageImportOptions{})
	if err != nil {
		return err
	}
	defer res.Close()
	_, err = io.Copy(io.Discard, res)
	return err
}
