package mcpserver

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/praxis-tools/praxis/internal/sse"
)

// DefaultReplayBytes is the default size of a session's event store: the
// events of its streams a client that lost its connection can still fetch
// with Last-Event-ID.
const DefaultReplayBytes = 8 << 20

// eventOverhead is what an event costs in the store besides its data.
const eventOverhead = 64

// eventStore keeps the recent events of one session's event streams, so
// that a client that lost a stream's connection can resume it with GET and
// Last-Event-ID. It holds at most max bytes: the oldest events go first,
// and an event larger than the whole store is not kept.
type eventStore struct {
	mu      sync.Mutex
	max     int
	size    int
	events  []storedEvent // oldest first, across streams
	streams map[int64]*stream
	next    int64 // the last stream ID given
}

type storedEvent struct {
	st   *stream
	seq  int64
	data []byte
}

func newEventStore(max int) *eventStore {
	return &eventStore{max: max, streams: make(map[int64]*stream)}
}

// open starts a new stream of the session.
func (es *eventStore) open() *stream {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.next++
	st := &stream{id: es.next, store: es, ended: make(chan struct{})}
	es.streams[st.id] = st
	return st
}

// add keeps one event of st, dropping the oldest events to make room.
func (es *eventStore) add(st *stream, seq int64, data []byte) {
	cost := len(data) + eventOverhead
	es.mu.Lock()
	defer es.mu.Unlock()
	if cost > es.max {
		return
	}
	for es.size+cost > es.max && len(es.events) > 0 {
		old := es.events[0]
		es.events[0] = storedEvent{}
		es.events = es.events[1:]
		es.size -= len(old.data) + eventOverhead
		es.forgetLocked(old.st)
	}
	es.events = append(es.events, storedEvent{st: st, seq: seq, data: data})
	es.size += cost
}

// forgetLocked drops st from the index once it has ended and has no event
// left to replay.
func (es *eventStore) forgetLocked(st *stream) {
	if !st.isEnded() {
		return
	}
	for _, e := range es.events {
		if e.st == st {
			return
		}
	}
	delete(es.streams, st.id)
}

// ended drops st when nothing of it is left to replay.
func (es *eventStore) ended(st *stream) {
	es.mu.Lock()
	defer es.mu.Unlock()
	es.forgetLocked(st)
}

// drop forgets st and its events.
func (es *eventStore) drop(st *stream) {
	es.mu.Lock()
	defer es.mu.Unlock()
	delete(es.streams, st.id)
	kept := es.events[:0]
	for _, e := range es.events {
		if e.st == st {
			es.size -= len(e.data) + eventOverhead
			continue
		}
		kept = append(kept, e)
	}
	clear(es.events[len(kept):])
	es.events = kept
}

// lookup returns the stream an event ID names and the event's sequence
// number.
func (es *eventStore) lookup(lastID string) (*stream, int64, error) {
	sid, seq, err := parseEventID(lastID)
	if err != nil {
		return nil, 0, err
	}
	es.mu.Lock()
	defer es.mu.Unlock()
	st := es.streams[sid]
	if st == nil {
		return nil, 0, fmt.Errorf("no stream of this session has event %s: it ended and its events were dropped from the replay buffer", lastID)
	}
	return st, seq, nil
}

// eventsAfter returns st's stored events after seq.
func (es *eventStore) eventsAfter(st *stream, seq int64) (data [][]byte, seqs []int64) {
	es.mu.Lock()
	defer es.mu.Unlock()
	for _, e := range es.events {
		if e.st == st && e.seq > seq {
			data, seqs = append(data, e.data), append(seqs, e.seq)
		}
	}
	return data, seqs
}

var errBadEventID = errors.New("not an event ID of this server")

func parseEventID(id string) (stream, seq int64, err error) {
	a, b, ok := strings.Cut(id, "-")
	if !ok {
		return 0, 0, errBadEventID
	}
	stream, err1 := strconv.ParseInt(a, 10, 64)
	seq, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || stream <= 0 || seq < 0 {
		return 0, 0, errBadEventID
	}
	return stream, seq, nil
}

func eventID(stream, seq int64) string {
	return strconv.FormatInt(stream, 10) + "-" + strconv.FormatInt(seq, 10)
}

// stream is one event stream of a session: the response to a POST once it
// became an event stream, or the session's standalone GET stream. Every
// event carries an ID and is kept in the session's store, so that the
// stream outlives its connection: while no connection is attached, events
// are only stored, and a GET with Last-Event-ID attaches a new connection
// after replaying what the client missed.
type stream struct {
	id    int64
	store *eventStore

	mu    sync.Mutex
	w     *eventWriter // the connection the stream is written to; nil while none
	seq   int64        // the last event's sequence number
	done  bool
	ended chan struct{} // closed when done
}

func (st *stream) isEnded() bool {
	select {
	case <-st.ended:
		return true
	default:
		return false
	}
}

// send writes one message as an event: to the store, and to the attached
// connection if any. A connection that fails is detached; the event stays
// in the store.
func (st *stream) send(enc writeFunc) error {
	data, err := encode(enc)
	if err != nil {
		return err
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return errStreamClosed
	}
	st.emitLocked(data)
	return nil
}

func (st *stream) emitLocked(data []byte) {
	st.seq++
	st.store.add(st, st.seq, data)
	if st.w != nil {
		if err := st.w.event(eventID(st.id, st.seq), data); err != nil {
			st.detachLocked(st.w)
		}
	}
}

// prime writes an event with an ID and no data, which tells the client
// the ID to resume from should the connection drop before anything else
// is sent.
func (st *stream) prime() {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.seq++
	if st.w != nil {
		if err := st.w.event(eventID(st.id, st.seq), nil); err != nil {
			st.detachLocked(st.w)
		}
	}
}

// finish sends the stream's last event, if enc is not nil (a cancelled
// request has none), and ends it.
func (st *stream) finish(enc writeFunc) error {
	var data []byte
	if enc != nil {
		var err error
		if data, err = encode(enc); err != nil {
			return err
		}
	}
	st.mu.Lock()
	if !st.done {
		if enc != nil {
			st.emitLocked(data)
		}
		st.done = true
		close(st.ended)
	}
	st.mu.Unlock()
	st.store.ended(st)
	return nil
}

// attach writes w the stored events after seq, then makes it the
// stream's connection. It reports false when the stream has ended, all of
// it replayed, or w failed.
func (st *stream) attach(w *eventWriter, seq int64) bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	data, seqs := st.store.eventsAfter(st, seq)
	for i, d := range data {
		if err := w.event(eventID(st.id, seqs[i]), d); err != nil {
			return false
		}
	}
	if st.done {
		return false
	}
	if st.w != nil {
		st.w.lost()
	}
	st.w = w
	return true
}

// detach removes w as the stream's connection, if it still is.
func (st *stream) detach(w *eventWriter) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.detachLocked(w)
}

func (st *stream) detachLocked(w *eventWriter) {
	if st.w == w {
		st.w = nil
		w.lost()
	}
}

// ping writes a keep-alive comment to the attached connection.
func (st *stream) ping(w *eventWriter) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.w != w {
		return errStreamClosed
	}
	if err := w.comment("keep-alive"); err != nil {
		st.detachLocked(w)
		return err
	}
	return nil
}

// encode renders one message.
func encode(enc writeFunc) ([]byte, error) {
	var b bytes.Buffer
	bw := bufio.NewWriter(&b)
	if err := enc(bw); err != nil {
		return nil, err
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// eventWriter writes server-sent events to one HTTP response.
type eventWriter struct {
	bw     *bufio.Writer
	rc     *http.ResponseController
	gone   chan struct{} // closed when the stream stopped writing here
	goneMu sync.Once
}

func newEventWriter(w http.ResponseWriter, bw *bufio.Writer) *eventWriter {
	return &eventWriter{bw: bw, rc: http.NewResponseController(w), gone: make(chan struct{})}
}

func (w *eventWriter) lost() { w.goneMu.Do(func() { close(w.gone) }) }

// event writes one event and flushes it. An event without data only sets
// the client's last event ID.
func (w *eventWriter) event(id string, data []byte) error {
	ev := sse.Event{ID: id, Data: data}
	if data != nil {
		ev.Event = "message"
	}
	if err := sse.Write(w.bw, ev); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.rc.Flush()
}

func (w *eventWriter) comment(text string) error {
	if err := sse.Comment(w.bw, text); err != nil {
		return err
	}
	if err := w.bw.Flush(); err != nil {
		return err
	}
	return w.rc.Flush()
}
