package testwait

import (
	"testing"
	"time"
)

func TestTheLimitComesBeforeTheBinarysDeadline(t *testing.T) {
	limit := Limit(t)
	if d, ok := t.Deadline(); ok && (!limit.Before(d) || !limit.After(time.Now())) {
		t.Errorf("limit %v; deadline %v", limit, d)
	}
	n := 0
	Until(t, "the third poll", func() bool { n++; return n == 3 })
	if n != 3 {
		t.Errorf("polled %d times", n)
	}
	if err := Context(t).Err(); err != nil {
		t.Errorf("the context ended at once: %v", err)
	}
}
