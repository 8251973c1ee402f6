package main

import (
	"context"
	"fmt"
)

// needle: a comment
func run(ctx context.Context) error {
	err := work(ctx, "needle")
	if err != nil {
		return fmt.Errorf("a.b(needle: %w", err)
	}
	return nil
}

func work(ctx context.Context, s string) error {
	_ = s
	return nil
}

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Println(err)
	}
}
