package main

import "testing"

func TestNeedle(t *testing.T) {
	t.Log("needle")
}
