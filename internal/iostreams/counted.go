package iostreams

import "context"

// Counted is told how far a long piece of work has gone: done of total
// units (items, problems), the same total each time.
type Counted func(done, total int)

type countedKey struct{}

// WithCounted is ctx carrying c, for work deep below the caller that has no
// stream of its own to report on: the viewer's server, which makes a run's
// view while a page waits, passes one down to the environment that makes
// the run's items again, and shows the count to the page.
func WithCounted(ctx context.Context, c Counted) context.Context {
	return context.WithValue(ctx, countedKey{}, c)
}

// Count tells ctx's Counted, if it carries one, that done of total units
// are done; without one it does nothing.
func Count(ctx context.Context, done, total int) {
	if c, ok := ctx.Value(countedKey{}).(Counted); ok && c != nil {
		c(done, total)
	}
}
