package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
)

// TestStdioConnLongLines reads responses longer than the reader's buffer,
// one after another into the same memory, with a request from the server
// in between: each call returns its own response whole.
func TestStdioConnLongLines(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	go func() {
		defer respW.Close()
		in := bufio.NewScanner(reqR)
		for id := 1; in.Scan(); id++ {
			if id == 2 { // the server asks something first
				fmt.Fprintf(respW, `{"jsonrpc":"2.0","id":"s1","method":"roots/list"}`+"\n")
				if !in.Scan() {
					return
				}
			}
			text := longText(id)
			fmt.Fprintf(respW, `{"jsonrpc":"2.0","id":%d,"result":{"content":[{"type":"text","text":%q}]}}`+"\n", id, text)
		}
	}()
	c := newStdioConn(reqW, respR)
	defer c.close()
	for id := 1; id <= 3; id++ {
		resp, _, err := c.call(context.Background(), "tools/call", json.RawMessage(`{}`))
		if err != nil {
			t.Fatalf("call %d: %v", id, err)
		}
		var m struct {
			ID     int `json:"id"`
			Result struct {
				Content []struct{ Text string } `json:"content"`
			} `json:"result"`
		}
		if err := json.Unmarshal(resp, &m); err != nil {
			t.Fatalf("call %d: response of %d bytes: %v", id, len(resp), err)
		}
		want := longText(id)
		if m.ID != id || len(m.Result.Content) != 1 || m.Result.Content[0].Text != want {
			t.Fatalf("call %d: got id %d and a text of %d bytes, want a text of %d", id, m.ID, len(m.Result.Content[0].Text), len(want))
		}
	}
}

// longText is the text of response id: about 3 MB, three times the
// reader's buffer, and of a different length each time.
func longText(id int) string {
	unit := fmt.Sprintf("line %d ", id)
	return strings.Repeat(unit, (3<<20)/len(unit)+id*1000)
}
