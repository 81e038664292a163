package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/models"
)

func TestDataHelp(t *testing.T) {
	streams, out, _ := iostreams.Test(false)
	if code := Execute(context.Background(), streams, []string{"data", "--help"}); code != ExitOK {
		t.Fatalf("feedrun data --help exited %d", code)
	}
	d := envs.Datasets()[0]
	for _, want := range []string{d.Name + "  " + d.Note, d.URL, "pull", "the environment that reads it defaults to it"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help does not mention %q:\n%s", want, out)
		}
	}
}

// TestDataPullChecksWhatItFetches: for every dataset, a mirror serving
// other bytes than the published file is refused (sha256) as a usage error,
// exit 2, and nothing of the download lands in the cache.
func TestDataPullChecksWhatItFetches(t *testing.T) {
	for _, d := range envs.Datasets() {
		t.Run(d.Name, func(t *testing.T) {
			t.Setenv(models.CacheEnv, t.TempDir())
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.ServeContent(w, r, "x", time.Time{}, strings.NewReader(strings.Repeat("[]", int(d.Size)/2)+strings.Repeat("x", int(d.Size)%2)))
			}))
			defer srv.Close()
			streams, out, errOut := iostreams.Test(false)
			code := Execute(context.Background(), streams, []string{"data", "pull", d.Name, "--url", srv.URL + "/" + d.File})
			if code != ExitUsage || !strings.Contains(errOut.String(), "sha256 mismatch: expected "+d.SHA256) {
				t.Fatalf("exit %d, stderr %q; want 2 and a sha256 mismatch", code, errOut)
			}
			if out.Len() != 0 {
				t.Errorf("stdout %q after a failed pull", out)
			}
			entries, err := os.ReadDir(filepath.Join(mustCache(t).Dir, "data"))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				// The pull lock stays, empty, by design (models.LockSuffix).
				if e.Name() != d.File+models.LockSuffix {
					t.Errorf("%s is in the cache after a failed pull", e.Name())
				}
			}
		})
	}
}

func TestDataPullRefusesUnknownNames(t *testing.T) {
	t.Setenv(models.CacheEnv, t.TempDir())
	streams, _, errOut := iostreams.Test(false)
	if code := Execute(context.Background(), streams, []string{"data", "pull", "mmlu"}); code != ExitUsage {
		t.Fatalf("exit %d, stderr %q; want 2", code, errOut)
	}
}

// TestDataPullFetches runs the command end to end against a local server
// serving a dataset that stands in for the real ones (whose bytes are not in the
// repository).
func TestDataPullFetches(t *testing.T) {
	content := []byte(`[{"task_id": 2}]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.ServeContent(w, r, "d.json", time.Time{}, strings.NewReader(string(content)))
	}))
	defer srv.Close()
	h := sha256.Sum256(content)
	withDatasets(t, models.Dataset{Name: "tiny", File: "tiny.json", URL: srv.URL, Size: int64(len(content)), SHA256: hex.EncodeToString(h[:])})
	t.Setenv(models.CacheEnv, t.TempDir())

	streams, out, errOut := iostreams.Test(false)
	if code := Execute(context.Background(), streams, []string{"data", "pull"}); code != ExitOK {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	path := filepath.Join(mustCache(t).Dir, "data", "tiny.json")
	if want := "tiny\t" + path + "\tfetched from " + srv.URL + "\n"; out.String() != want {
		t.Fatalf("stdout %q, want %q", out, want)
	}
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(content) {
		t.Fatalf("cached file %q, %v", got, err)
	}
}

func mustCache(t *testing.T) models.Cache {
	t.Helper()
	c, err := models.DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// withDatasets makes ds, for the test, the only datasets the registry's
// environments declare.
func withDatasets(t *testing.T, ds ...models.Dataset) {
	t.Helper()
	saved := envs.All
	all := slices.Clone(saved)
	for i := range all {
		all[i].Datasets = nil
	}
	all[0].Datasets = ds
	envs.All = all
	t.Cleanup(func() { envs.All = saved })
}
