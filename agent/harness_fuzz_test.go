package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzFold folds arbitrary event streams (JSON Lines): nothing panics, and
// folding is deterministic.
func FuzzFold(f *testing.F) {
	f.Add([]byte(`{"type":"run_start","run_id":"s","seq":1,"task":"t"}
{"type":"tool_start","run_id":"s","seq":2,"call_id":"a","tool":"x"}
{"type":"step_complete","run_id":"s","seq":3,"message":{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"x"}]}}
{"type":"compacted","run_id":"s","seq":4,"text":"summary","kept":1,"folded":1}
{"type":"message","run_id":"s","seq":5,"text":"hi"}
{"type":"run_start","run_id":"s","seq":6,"resumed":true,"task":"more"}`))
	f.Add([]byte(`{"type":"compacted","run_id":"s","seq":1,"kept":99}`))
	f.Add([]byte(`{"type":"run_start","run_id":"s","seq":1}
{"type":"compacted","run_id":"s","seq":2,"kept":-3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var events []Event
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				events = append(events, e)
			}
		}
		a, errA := Fold(events)
		b, errB := Fold(events)
		if (errA == nil) != (errB == nil) {
			t.Fatal("Fold is not deterministic")
		}
		if errA == nil {
			ja, _ := json.Marshal(a)
			jb, _ := json.Marshal(b)
			if !bytes.Equal(ja, jb) {
				t.Fatal("Fold is not deterministic")
			}
		}
	})
}
