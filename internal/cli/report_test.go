package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/results"
)

func TestReportWithoutFolders(t *testing.T) {
	t.Run("none there", func(t *testing.T) {
		io, _, _ := iostreams.Test(false)
		err := reportRun(context.Background(), &ReportOptions{IO: io, Results: filepath.Join(t.TempDir(), "results")})
		if err == nil || !strings.Contains(err.Error(), "no run folders under") || !strings.Contains(err.Error(), "feedrun probe") {
			t.Fatalf("got %v, want an error that says how to make a run folder", err)
		}
	})
	t.Run("every run folder under results", func(t *testing.T) {
		root := t.TempDir()
		// The committed sweep runs are small and need no model.
		for _, name := range []string{"sweep-scripted-p0.3", "sweep-scripted-p0.6"} {
			src := filepath.Join("..", "..", "results", name)
			dst := filepath.Join(root, name)
			if err := os.MkdirAll(dst, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{results.ManifestName, results.SweepEpisodes.Name} {
				data, err := os.ReadFile(filepath.Join(src, f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		// Neither a stray file nor a folder without a manifest is a run.
		os.WriteFile(filepath.Join(root, "report.md"), []byte("x"), 0o644)
		os.MkdirAll(filepath.Join(root, "plots"), 0o755)
		io, out, _ := iostreams.Test(false)
		if err := reportRun(context.Background(), &ReportOptions{IO: io, Results: root, Format: "text", Bootstrap: 50, Seed: 1}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out.String(), "2 run folder(s)") || !strings.Contains(out.String(), "Table 5.") {
			t.Errorf("report of %s:\n%s", root, out.String())
		}
	})
}
