package envs

import (
	"slices"
	"strings"

	"github.com/feedrun/feedrun/envs/bfcl"
	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/models"
)

// All are the environments --env names, in the order help lists them; the
// first is the default.
var All = []env.Entry{
	toolshed.Entry,
	coderepair.Entry,
	bfcl.EnvEntry,
}

// Lookup is the entry named name.
func Lookup(name string) (env.Entry, bool) {
	i := slices.IndexFunc(All, func(e env.Entry) bool { return e.Name == name })
	if i < 0 {
		return env.Entry{}, false
	}
	return All[i], true
}

// Names lists the environments for help and errors: "a or b".
func Names() string {
	names := make([]string, len(All))
	for i, e := range All {
		names[i] = e.Name
	}
	return strings.Join(names, " or ")
}

// FinishCall says whether the episodes of the environment named name end
// by a finish call; an environment not here has none.
func FinishCall(name string) bool {
	e, ok := Lookup(name)
	return ok && e.FinishCall()
}

// Datasets are the datasets the registry's environments read, in its
// order: what `feedrun data pull` fetches.
func Datasets() []models.Dataset {
	var out []models.Dataset
	for _, e := range All {
		out = append(out, e.Datasets...)
	}
	return out
}
