// Package testwait bounds a test's wait for an event by the test binary's
// own deadline (go test -timeout), never by a fixed number of seconds: on a
// cold, busy machine an event comes late, not never, and a test that gives
// up after 5 s fails there for nothing. A wait that reaches the limit fails
// with what it waited for, shortly before go test would end the binary
// with nothing but goroutine stacks.
package testwait

import (
	"context"
	"testing"
	"time"
)

// Limit is when a wait in t gives up: a twentieth of the time left before
// the binary's deadline, at least a second, ahead of it; far off without
// a deadline (-timeout 0).
func Limit(t *testing.T) time.Time {
	d, ok := t.Deadline()
	if !ok {
		return time.Now().Add(24 * time.Hour)
	}
	return d.Add(-max(time.Until(d)/20, time.Second))
}

// After fires at t's Limit, for a select that must not wait forever (a
// test server's handler holding a response until the client gives up).
func After(t *testing.T) <-chan time.Time {
	return time.After(time.Until(Limit(t)))
}

// Context is t.Context(), ended at t's Limit: for a command or a call that
// could hang if the code under test regresses.
func Context(t *testing.T) context.Context {
	ctx, cancel := context.WithDeadline(t.Context(), Limit(t))
	t.Cleanup(cancel)
	return ctx
}

// Until polls cond every few milliseconds until it holds, and fails t,
// saying what never happened, if t's Limit comes first.
func Until(t *testing.T, what string, cond func() bool) {
	t.Helper()
	limit := Limit(t)
	for !cond() {
		if time.Now().After(limit) {
			t.Fatalf("waited until the test's deadline: %s never happened", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}
