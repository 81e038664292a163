package iostreams

import (
	"context"
	"testing"
)

// Count reaches the Counted a context carries, and is harmless without one.
func TestCountReachesTheContextsCounted(t *testing.T) {
	var got [2]int
	ctx := WithCounted(context.Background(), func(done, total int) { got = [2]int{done, total} })
	Count(ctx, 3, 10)
	if got != [2]int{3, 10} {
		t.Errorf("Count(3, 10) told %v", got)
	}
	Count(context.Background(), 1, 2)
}
