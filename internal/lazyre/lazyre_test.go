package lazyre

import (
	"sync"
	"testing"
)

var word = New(`^[a-z]+$`)

func TestGetCompilesOnce(t *testing.T) {
	if word.re != nil {
		t.Fatal("compiled before its first Get")
	}
	var wg sync.WaitGroup
	got := make([]any, 8)
	for i := range got {
		wg.Go(func() { got[i] = word.Get() })
	}
	wg.Wait()
	for _, re := range got[1:] {
		if re != got[0] {
			t.Fatalf("concurrent Gets returned different expressions: %p and %p", re, got[0])
		}
	}
	if !word.Get().MatchString("abc") || word.Get().MatchString("ab1") {
		t.Errorf("%s does not match as its source says", word.Get())
	}
}

func TestGetPanicsOnBadSource(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Get of an invalid source did not panic")
		}
	}()
	New(`(`).Get()
}
