package probe

import (
	"context"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/transcript"
	"github.com/feedrun/feedrun/internal/usage"
)

// Needs are what a probe asks of the environment: probe items, unless
// they come from an items file and are probed as they are. onPolicy says
// the failed actions are the model's own (--on-policy), itemsFile is
// --items-file.
func Needs(onPolicy bool, itemsFile string) []env.Need {
	switch {
	case onPolicy:
		return []env.Need{env.Needs(env.ProbeItemsOf, "--on-policy")}
	case itemsFile == "":
		return []env.Need{env.Needs(env.ProbeItemsOf, "probe")}
	}
	return nil
}

// Items are a probe's items in e, and the sha256 its manifest records of
// them: the first n (0: all) the environment makes with seed, or of
// itemsFile where one is given (ReadItemsFile), whose sha256 is of the
// whole file, whatever n takes of it. Whatever is wrong with the file is
// the user's to fix.
func Items(ctx context.Context, e env.Env, seed uint64, n int, itemsFile string) ([]transcript.Item, string, error) {
	if itemsFile == "" {
		items, err := ItemsOf(ctx, e, "probe", seed, n)
		return items, e.DatasetSHA256(), err
	}
	items, sum, err := ReadItemsFile(itemsFile, e.Name())
	if err != nil {
		return nil, "", usage.Error{Err: err}
	}
	if n > 0 && len(items) > n {
		items = items[:n]
	}
	return items, sum, nil
}

// ItemsOf are the first n (0: all) probe items e makes with seed, for
// user, the command or setting that needs them (named if e has none).
func ItemsOf(ctx context.Context, e env.Env, user string, seed uint64, n int) ([]transcript.Item, error) {
	src, err := env.ProbeItemsOf(e, user)
	if err != nil {
		return nil, err
	}
	return src.Items(ctx, seed, n)
}
