package shown

import (
	"context"
	"errors"
	"path/filepath"
	"testing"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/usage"
	"github.com/feedrun/feedrun/internal/viewer"
)

// A folder that cannot be read as a run is the user's to fix, for show,
// export and view alike, and nothing is written or served.
func TestUnreadableFoldersAreTheUsersToFix(t *testing.T) {
	dirs := []string{filepath.Join(t.TempDir(), "no-such-run")}
	look := func(string) (env.Entry, env.Settings, error) {
		t.Error("looked up an environment")
		return env.Entry{}, nil, nil
	}
	note := func(string, ...any) {}
	out := filepath.Join(t.TempDir(), "logs")
	if paths, _, err := Export(context.Background(), dirs, look, false, out, note); !errors.As(err, new(usage.Error)) || paths != nil {
		t.Errorf("Export = %v, %v; want a usage error and no logs", paths, err)
	}
	if b, err := Transcripts(context.Background(), dirs, look, false, runs.Filter{}, false, viewer.TextStyle{}, func(string) {}, note); !errors.As(err, new(usage.Error)) || b != nil {
		t.Errorf("Transcripts = %q, %v; want a usage error and nothing", b, err)
	}
	if srv, err := Viewer(dirs, look, false, note); !errors.As(err, new(usage.Error)) || srv != nil {
		t.Errorf("Viewer = %v, %v; want a usage error and no server", srv, err)
	}
}
