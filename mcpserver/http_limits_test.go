package mcpserver

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawPost writes a POST of body on a new connection and returns the
// connection and a reader of the response.
func rawPost(t *testing.T, u, session, body string, headers ...string) (net.Conn, *bufio.Reader) {
	t.Helper()
	pu, _ := url.Parse(u)
	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %d\r\n", pu.Path, pu.Host, len(body))
	if session != "" {
		fmt.Fprintf(conn, "Mcp-Session-Id: %s\r\n", session)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		fmt.Fprintf(conn, "%s: %s\r\n", headers[i], headers[i+1])
	}
	io.WriteString(conn, "\r\n"+body)
	return conn, bufio.NewReader(conn)
}

// TestHTTPDisconnectAndResume drops the connection of a running call: the
// call runs on, and a GET with the Last-Event-ID the client saw last
// delivers the result on the same session.
func TestHTTPDisconnectAndResume(t *testing.T) {
	started := make(chan string, 4)
	s, dir := newTestServer(t, Options{}, started)
	srv := startHTTP(t, s, HTTPOptions{StreamAfter: time.Millisecond})
	c := srv.client(t)
	p := initParams(nil)
	p["protocolVersion"] = "2025-11-25"
	resp := c.post(mustJSON(request(0, "initialize", p)))
	c.session = resp.Header.Get("Mcp-Session-Id")
	messages(t, resp)
	c.post(mustJSON(notification("notifications/initialized", nil))).Body.Close()

	conn, r := rawPost(t, srv.url, c.session, mustJSON(request(5, "tools/call", callParams("gate", map[string]any{"path": "open"}, nil))))
	if got := <-started; got != "gate" {
		t.Fatalf("got %q", got)
	}
	// Read up to the priming event's ID, then hang up.
	lastID := ""
	for lastID == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("no event ID before the connection ended: %v", err)
		}
		if id, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "id: "); ok {
			lastID = id
		}
	}
	conn.Close()

	writeFile(t, dir, "open", "") // the call can finish now, with nobody connected
	req, _ := http.NewRequest(http.MethodGet, srv.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", c.session)
	req.Header.Set("Last-Event-ID", lastID)
	got, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if got.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(got.Body)
		t.Fatalf("resume: %s %s", got.Status, b)
	}
	ms := messages(t, got) // the stream ends after the response
	if len(ms) == 0 || string(ms[len(ms)-1].ID) != "5" || ms[len(ms)-1].tool(t).text() != "released open" {
		t.Fatalf("resumed stream: %v", ms)
	}
	select {
	case got := <-started:
		t.Errorf("the tool reported %q", got)
	default:
	}

	// An ID the session never gave is refused.
	req.Header.Set("Last-Event-ID", "999-1")
	bad, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	bad.Body.Close()
	if bad.StatusCode != http.StatusBadRequest {
		t.Errorf("unknown Last-Event-ID: %s", bad.Status)
	}
}

// TestHTTPEventStoreBound: the store keeps the newest events within its
// size, and an event larger than the store is not kept.
func TestHTTPEventStoreBound(t *testing.T) {
	es := newEventStore(3 * (100 + eventOverhead))
	st := es.open()
	for i := range 5 {
		st.send(jsonValue(strings.Repeat(strconv.Itoa(i), 98))) // 100 bytes with quotes
	}
	st.send(jsonValue(strings.Repeat("x", 1000)))
	data, seqs := es.eventsAfter(st, 0)
	if len(data) != 3 || seqs[0] != 3 || seqs[2] != 5 || es.size > es.max {
		t.Errorf("kept seqs %v (%d bytes of %d)", seqs, es.size, es.max)
	}
}

// TestHTTPBodyLimit: a body over the limit gets 413 before it is read
// whole, whether its length is announced or not.
func TestHTTPBodyLimit(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	srv := startHTTP(t, s, HTTPOptions{MaxBodyBytes: 1 << 20})
	pu, _ := url.Parse(srv.url)
	for _, chunked := range []bool{false, true} {
		conn, err := net.Dial("tcp", pu.Host)
		if err != nil {
			t.Fatal(err)
		}
		length := "Content-Length: 104857600"
		if chunked {
			length = "Transfer-Encoding: chunked"
		}
		fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s\r\n\r\n", pu.Host, length)
		// Send up to 100 MiB; the server answers and closes long before.
		go func() {
			chunk := strings.Repeat("x", 64<<10)
			for range 1600 {
				if chunked {
					fmt.Fprintf(conn, "%x\r\n", len(chunk))
				}
				if _, err := io.WriteString(conn, chunk); err != nil {
					return
				}
				if chunked {
					io.WriteString(conn, "\r\n")
				}
			}
		}()
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("chunked %v: %s", chunked, resp.Status)
		}
		conn.Close()
	}
}

// TestHTTPSlowClients: a client that sends its headers or its body byte by
// byte is disconnected by the timeouts.
func TestHTTPSlowClients(t *testing.T) {
	s, _ := newTestServer(t, Options{}, nil)
	srv := startHTTP(t, s, HTTPOptions{ReadHeaderTimeout: 200 * time.Millisecond, ReadBodyTimeout: 200 * time.Millisecond})
	pu, _ := url.Parse(srv.url)
	for _, tc := range []struct{ name, head, trickle string }{
		{"headers", "", "POST /mcp HTTP/1.1\r\nHost: " + pu.Host + "\r\nX-Slow: " + strings.Repeat("a", 200)},
		{"body", "POST /mcp HTTP/1.1\r\nHost: " + pu.Host + "\r\nContent-Type: application/json\r\nContent-Length: 200\r\n\r\n", strings.Repeat(" ", 200)},
	} {
		conn, err := net.Dial("tcp", pu.Host)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, tc.head)
		closed := false
		for i := 0; i < len(tc.trickle) && !closed; i++ {
			if _, err := conn.Write([]byte{tc.trickle[i]}); err != nil {
				closed = true
			}
			time.Sleep(25 * time.Millisecond)
			conn.SetReadDeadline(time.Now().Add(time.Millisecond))
			var b [512]byte
			if _, err := conn.Read(b[:]); err != nil && !isTimeout(err) {
				closed = true
			}
		}
		conn.Close()
		if !closed {
			t.Errorf("%s: the server kept a connection that sent %d bytes one by one", tc.name, len(tc.trickle))
		}
	}
}

func isTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// TestHTTPSessionRequestCap: a session's requests in flight are bounded;
// notifications (a cancellation) still get through at the bound.
func TestHTTPSessionRequestCap(t *testing.T) {
	started := make(chan string, 8)
	s, _ := newTestServer(t, Options{}, started)
	c := startHTTP(t, s, HTTPOptions{MaxSessionRequests: 2}).client(t)
	c.initialize()
	done := make(chan *http.Response, 2)
	for id := range 2 {
		go func() {
			done <- c.post(mustJSON(request(10+id, "tools/call", callParams("block", map[string]any{}, nil))))
		}()
		<-started
	}
	resp := c.post(mustJSON(request(12, "ping", nil)))
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		t.Errorf("a third request: %s", resp.Status)
	}
	for id := range 2 {
		r := c.post(mustJSON(notification("notifications/cancelled", map[string]any{"requestId": 10 + id})))
		r.Body.Close()
		if r.StatusCode != http.StatusAccepted {
			t.Errorf("cancel at the bound: %s", r.Status)
		}
	}
	for range 2 {
		messages(t, <-done)
	}
	if ms := c.call(13, "steps", map[string]any{"n": 1}, nil); len(ms) == 0 {
		t.Error("no answer once the calls ended")
	}
}

// TestHTTPMemoryBounded runs the server in a child process (this test
// binary) and sends it a 100 MiB body, then eight bodies just under the
// limit at once: the first gets 413, and the child's peak resident memory
// stays far below what buffering the body would take. After the large
// requests, the child's heap is back near where it started.
func TestHTTPMemoryBounded(t *testing.T) {
	if os.Getenv("MCPSERVER_MEMORY_CHILD") != "" {
		t.Skip("in the child")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("needs /proc to read a process's memory")
	}
	if raceEnabled {
		t.Skip("the race detector's shadow memory makes resident sizes meaningless")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPMemoryChild$", "-test.v")
	cmd.Env = append(os.Environ(), "MCPSERVER_MEMORY_CHILD=1")
	stdout, _ := cmd.StdoutPipe()
	stdin, _ := cmd.StdinPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(stdout)
	next := func(prefix string) string {
		for lines.Scan() {
			if v, ok := strings.CutPrefix(lines.Text(), prefix); ok {
				return v
			}
		}
		t.Fatalf("the child ended before %q", prefix)
		return ""
	}
	u := next("URL ")
	pu, _ := url.Parse(u)
	c := &httpClient{t: t, url: u, header: http.Header{}}
	c.initialize()

	conn, err := net.Dial("tcp", pu.Host)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\nMcp-Session-Id: %s\r\n\r\n", pu.Host, c.session)
	go func() {
		chunk := strings.Repeat("x", 1<<20)
		for range 100 {
			if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(chunk), chunk); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	conn.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Fatalf("100 MiB body: %s", resp.Status)
	}
	io.WriteString(stdin, "report\n")
	hwm413, _ := strconv.Atoi(next("HWM_KB "))
	t.Logf("child: peak RSS %d KiB after the 100 MiB body", hwm413)
	if hwm413 > 64<<10 {
		t.Errorf("peak RSS %d KiB after a 100 MiB body: it was buffered past the limit", hwm413)
	}

	content := strings.Repeat("y", DefaultMaxBodyBytes-1024)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			_, err := c.tryCall(100+i, "write_file", map[string]any{"path": fmt.Sprintf("big%d.txt", i), "content": content}, nil)
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	io.WriteString(stdin, "report\n")
	hwm, _ := strconv.Atoi(next("HWM_KB "))
	heapBefore, _ := strconv.Atoi(next("HEAP_BEFORE "))
	heapAfter, _ := strconv.Atoi(next("HEAP_AFTER "))
	t.Logf("child: peak RSS %d KiB after eight bodies of 4 MiB at once; heap in use %d KiB before the requests, %d KiB after", hwm, heapBefore/1024, heapAfter/1024)
	if heapAfter > heapBefore+8<<20 {
		t.Errorf("heap in use grew from %d to %d bytes after the requests ended", heapBefore, heapAfter)
	}
}

// TestHTTPMemoryChild is the server TestHTTPMemoryBounded measures.
func TestHTTPMemoryChild(t *testing.T) {
	if os.Getenv("MCPSERVER_MEMORY_CHILD") == "" {
		t.Skip("run by TestHTTPMemoryBounded")
	}
	s, _ := newTestServer(t, Options{}, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.ServeStreamableHTTP(ctx, ln, HTTPOptions{})
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	before := ms.HeapInuse
	fmt.Printf("URL http://%s/mcp\n", ln.Addr())
	in := bufio.NewReader(os.Stdin)
	for range 2 {
		in.ReadString('\n')
		status, _ := os.ReadFile("/proc/self/status")
		for _, line := range strings.Split(string(status), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				fmt.Printf("HWM_KB %s\n", strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			}
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	fmt.Printf("HEAP_BEFORE %d\nHEAP_AFTER %d\n", before, ms.HeapInuse)
}
