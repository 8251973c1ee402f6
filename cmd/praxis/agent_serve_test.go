package main

import "testing"

func TestTighter(t *testing.T) {
	for _, tc := range []struct{ flag, req, want int }{
		{50, 0, 50}, {50, 10, 10}, {50, 500, 50}, {0, 7, 7}, {0, 0, 0},
	} {
		if got := tighter(tc.flag, tc.req); got != tc.want {
			t.Errorf("tighter(%d, %d) = %d, want %d", tc.flag, tc.req, got, tc.want)
		}
	}
	if got := tighter(2.5, 9.0); got != 2.5 {
		t.Errorf("a request raised --max-cost to %v", got)
	}
}
