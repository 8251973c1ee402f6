package mcpserver

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// benchStdio serves s over pipes and returns a function doing one
// request/response round trip with a raw line.
func benchStdio(b *testing.B, s *Server) func(line string) []byte {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.ServeStdio(ctx, inR, outW, StdioOptions{})
		outW.Close()
		close(done)
	}()
	b.Cleanup(func() { inW.Close(); cancel(); <-done })
	r := bufio.NewReaderSize(outR, 1<<20)
	var buf []byte
	roundTrip := func(line string) []byte {
		if _, err := io.WriteString(inW, line); err != nil {
			b.Fatal(err)
		}
		buf = buf[:0]
		for {
			frag, err := r.ReadSlice('\n')
			buf = append(buf, frag...)
			if err == nil {
				return buf
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				b.Fatal(err)
			}
		}
	}
	roundTrip(mustJSON(request(0, "initialize", initParams(nil))) + "\n")
	io.WriteString(inW, mustJSON(notification("notifications/initialized", nil))+"\n")
	return roundTrip
}

// BenchmarkStdioTinyCall is one small tool call over stdio.
func BenchmarkStdioTinyCall(b *testing.B) {
	s, _ := newTestServer(b, Options{}, nil)
	rt := benchStdio(b, s)
	line := mustJSON(request(1, "tools/call", callParams("steps", map[string]any{"n": 0}, nil))) + "\n"
	b.ReportAllocs()
	for b.Loop() {
		rt(line)
	}
}

// BenchmarkStdioReadFile reads a whole file over stdio.
func BenchmarkStdioReadFile(b *testing.B) {
	for _, size := range []int{2 << 10, 10 << 20} {
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s, dir := newTestServer(b, Options{}, nil)
			writeFile(b, dir, "f.txt", textOfSize(size))
			rt := benchStdio(b, s)
			line := mustJSON(request(1, "tools/call", callParams("read_file", map[string]any{"path": "f.txt", "limit": 1 << 30}, nil))) + "\n"
			if out := rt(line); len(out) < size {
				b.Fatalf("short response: %d bytes", len(out))
			}
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				rt(line)
			}
		})
	}
}

// textOfSize returns source-like text of about n bytes.
func textOfSize(n int) string {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "\tfmt.Println(\"line %d: a \\\"quoted\\\" <tag> & tab\\t\")\n", i)
	}
	return sb.String()[:n-1] + "\n"
}

// BenchmarkEncodeToolResult compares writing a 10 MB text result with
// mcp-go's own encoding of the same result.
func BenchmarkEncodeToolResult(b *testing.B) {
	text := textOfSize(10 << 20)
	res := &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: map[string]any{"size": len(text)}}
	resp := mcp.NewJSONRPCResultResponse(mcp.NewRequestId(1), res)
	b.Run("praxis", func(b *testing.B) {
		w := bufio.NewWriterSize(io.Discard, 64<<10)
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			responseFunc(json.RawMessage("1"), resp)(w)
			w.Flush()
		}
	})
	b.Run("mcp-go", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if _, err := json.Marshal(resp); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// sourceText returns about n bytes shaped like source code: lines of 60
// to 100 bytes, most indented with tabs, with now and then a quoted string
// or a backslash. Its lines hold about four bytes to escape in 84 (the
// newline, the tabs and the odd quote) at places that vary, where
// textOfSize's hold nine in 55 at the same places line after line, which
// the CPU's branch prediction learns: how many escapes there are and how
// regular they are is what writeString's speed depends on.
func sourceText(n int) string {
	words := []string{"if", "err", "!=", "nil", "return", "func", "for", ":=", "range", "len(s)", "i++", "x", "{", "}", "//", "the", "value", "w.Write(buf)"}
	rng := rand.New(rand.NewPCG(3, 4))
	var sb strings.Builder
	for sb.Len() < n {
		end := sb.Len() + 60 + rng.IntN(41)
		sb.WriteString("\t\t\t"[:rng.IntN(4)])
		for sb.Len() < end {
			switch rng.IntN(40) {
			case 0:
				sb.WriteString(`"a string"`)
			case 1:
				sb.WriteString(`'\n'`)
			default:
				sb.WriteString(words[rng.IntN(len(words))])
			}
			sb.WriteByte(' ')
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// BenchmarkWriteString escapes texts of a large read_file result's size:
// Go-like source, a 10 MB file's hashline text (one escape, the newline,
// in about 110 bytes), pretty-printed JSON (a quote every few bytes) and
// textOfSize's nine escapes in 55 bytes at the same places.
func BenchmarkWriteString(b *testing.B) {
	for _, c := range []struct {
		name string
		text string
	}{
		{"source", sourceText(10 << 20)},
		{"hashline", hashlineText(12 << 20)},
		{"json", jsonText(10 << 20)},
		{"dense", textOfSize(10 << 20)},
	} {
		b.Run(c.name, func(b *testing.B) {
			w := bufio.NewWriterSize(io.Discard, 64<<10)
			b.SetBytes(int64(len(c.text)))
			for b.Loop() {
				writeString(w, c.text)
				w.Flush()
			}
		})
	}
}

// BenchmarkTinyReadFile compares a tiny read_file over stdio with the same
// call made on the catalog directly: the difference is the server's cost.
func BenchmarkTinyReadFile(b *testing.B) {
	s, dir := newTestServer(b, Options{}, nil)
	writeFile(b, dir, "tiny.txt", "hello\n")
	b.Run("stdio", func(b *testing.B) {
		rt := benchStdio(b, s)
		line := mustJSON(request(1, "tools/call", callParams("read_file", map[string]any{"path": "tiny.txt"}, nil))) + "\n"
		b.ReportAllocs()
		for b.Loop() {
			rt(line)
		}
	})
	b.Run("catalog", func(b *testing.B) {
		args := json.RawMessage(`{"path":"tiny.txt"}`)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.def.Catalog().Call(context.Background(), "read_file", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkBigReadFile compares reading a 10 MB file over stdio with the
// same catalog call.
func BenchmarkBigReadFile(b *testing.B) {
	s, dir := newTestServer(b, Options{}, nil)
	writeFile(b, dir, "big.txt", textOfSize(10<<20))
	b.Run("stdio", func(b *testing.B) {
		rt := benchStdio(b, s)
		line := mustJSON(request(1, "tools/call", callParams("read_file", map[string]any{"path": "big.txt", "limit": 1 << 30}, nil))) + "\n"
		for b.Loop() {
			rt(line)
		}
	})
	b.Run("catalog", func(b *testing.B) {
		args := json.RawMessage(`{"path":"big.txt","limit":1073741824}`)
		for b.Loop() {
			if _, err := s.def.Catalog().Call(context.Background(), "read_file", args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkHTTPCall is a tiny tool call over streamable HTTP, from 16
// clients in parallel sharing one session.
func BenchmarkHTTPCall(b *testing.B) {
	s, _ := newTestServer(b, Options{}, nil)
	h := startHTTP(b, s, HTTPOptions{})
	c := h.client(b)
	c.initialize()
	body := mustJSON(request(1, "tools/call", callParams("steps", map[string]any{"n": 0}, nil)))
	b.SetParallelism(8)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			resp := c.post(body)
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				b.Fatal(resp.Status)
			}
		}
	})
}

// hashlineText is a read_file result's text of n bytes: hashline lines of
// about 110 bytes, one escape (the newline) each.
func hashlineText(n int) string {
	var sb strings.Builder
	for i := 1; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "%d:abcd|%08d the quick brown fox jumps over the lazy dog %046d\n", i, i, i*104729)
	}
	return sb.String()
}

// jsonText is a pretty-printed JSON document of n bytes: a quote every few
// bytes, the densest escaping of common files.
func jsonText(n int) string {
	var sb strings.Builder
	sb.WriteString("[\n")
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "  {\n    \"id\": %d,\n    \"name\": \"item %d\",\n    \"tags\": [\"a\", \"bc\", \"def\"],\n    \"path\": \"src\\\\pkg\\\\file%d.go\"\n  },\n", i, i, i)
	}
	return sb.String()
}
