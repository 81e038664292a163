package models

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/usage"
)

// testDataset is a dataset served by srv whose recorded size and sha256
// are those of content.
func testDataset(srv *hfServer, content []byte) Dataset {
	return Dataset{Name: "tiny-data", File: "tiny.json", URL: srv.URL + hfPath, Size: int64(len(content)), SHA256: sum(content)}
}

func dataFiles(t *testing.T, c Cache) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(c.Dir, "data"))
	if os.IsNotExist(err) {
		return nil
	}
	ok(t, err)
	var names []string
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), LockSuffix) {
			names = append(names, e.Name())
		}
	}
	return names
}

func TestPullDataset(t *testing.T) {
	content := []byte(strings.Repeat(`{"task_id": 1}, `, 5000))
	srv := newHFServer(t, content)
	f, status := newTestFetcher(t)
	f.HFToken = "hf_secret"
	d := testDataset(srv, content)

	got, err := f.PullDataset(context.Background(), d)
	ok(t, err)
	want := Pulled{Name: "tiny-data", Path: filepath.Join(f.Cache.Dir, "data", "tiny.json"), Source: d.URL, SHA256: d.SHA256, Size: d.Size}
	if got != want {
		t.Fatalf("PullDataset = %+v, want %+v", got, want)
	}
	equalFile(t, got.Path, content)
	if files := dataFiles(t, f.Cache); !slices.Equal(files, []string{"tiny.json"}) {
		t.Fatalf("data folder holds %v, want only tiny.json", files)
	}
	// The Hugging Face token is for Hugging Face alone.
	if _, auth := srv.requests(); !slices.Equal(auth, []string{""}) {
		t.Fatalf("Authorization headers %q, want none", auth)
	}
	if !strings.Contains(status.String(), "pull tiny-data: fetched into "+got.Path) {
		t.Fatalf("status does not say where the file went:\n%s", status)
	}
	if path, cached := f.Cache.CachedDataset(d); !cached || path != got.Path {
		t.Fatalf("CachedDataset = %q, %v after a pull", path, cached)
	}

	again, err := f.PullDataset(context.Background(), d)
	ok(t, err)
	if !again.Cached || again.Path != got.Path {
		t.Fatalf("second PullDataset = %+v, want Cached at %s", again, got.Path)
	}
	if ranges, _ := srv.requests(); len(ranges) != 1 {
		t.Fatalf("second PullDataset made a request; requests: %d", len(ranges))
	}
}

func TestPullDatasetResumes(t *testing.T) {
	content := []byte(strings.Repeat("0123456789abcdef", 8192))
	srv := newHFServer(t, content)
	f, _ := newTestFetcher(t)
	d := testDataset(srv, content)
	checkResume(t, srv, content, f.Cache.DatasetPath(d), "pull tiny-data: download interrupted after",
		func() error { _, err := f.PullDataset(context.Background(), d); return err },
		func() bool { _, cached := f.Cache.CachedDataset(d); return cached })
}

func TestPullDatasetChecks(t *testing.T) {
	content := []byte(strings.Repeat("x", 4096))
	tests := []struct {
		name  string
		edit  func(d Dataset) Dataset
		want  string
		usage bool // the address serves another file: the user's to fix (exit 2)
	}{
		{"sha256 mismatch", func(d Dataset) Dataset { d.SHA256 = sum([]byte("other")); return d }, "sha256 mismatch: expected " + sum([]byte("other")) + ", got " + sum(content), true},
		{"size mismatch", func(d Dataset) Dataset { d.Size++; return d }, "size mismatch: expected 4097 bytes, got 4096", true},
		{"not found", func(d Dataset) Dataset { d.URL += "-gone"; return d }, "404 Not Found", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := newHFServer(t, content)
			f, _ := newTestFetcher(t)
			_, err := f.PullDataset(context.Background(), tt.edit(testDataset(srv, content)))
			errContains(t, err, tt.want)
			if got := errors.As(err, new(usage.Error)); got != tt.usage {
				t.Errorf("usage error: %v, want %v (%v)", got, tt.usage, err)
			}
			if files := dataFiles(t, f.Cache); len(files) != 0 {
				t.Fatalf("data folder holds %v after a failed pull", files)
			}
		})
	}
}

// TestPullDatasetProgress: a download draws a byte bar on a terminal, and
// none on a pipe.
func TestPullDatasetProgress(t *testing.T) {
	content := []byte(strings.Repeat("y", 64<<10))
	for _, tty := range []bool{true, false} {
		t.Run("tty="+strconv.FormatBool(tty), func(t *testing.T) {
			srv := newHFServer(t, content)
			streams, _, status := iostreams.Test(tty)
			f := &Fetcher{Cache: Cache{Dir: t.TempDir()}, IO: streams}
			_, err := f.PullDataset(context.Background(), testDataset(srv, content))
			ok(t, err)
			if drawn := strings.Contains(status.String(), "tiny.json 100%"); drawn != tty {
				t.Fatalf("bar drawn = %v on tty=%v; stderr:\n%q", drawn, tty, status)
			}
		})
	}
}

// testDatasets stand in for the environments' datasets: this package
// knows none by name.
var testDatasets = []Dataset{
	{Name: "tiny", File: "tiny.json", URL: "https://example.invalid/tiny.json", Size: 2},
	{Name: "small", File: "small.json", URL: "https://example.invalid/small.json", Size: 3},
}

func TestLookupDataset(t *testing.T) {
	d, err := LookupDataset(testDatasets, "small")
	ok(t, err)
	if d != testDatasets[1] {
		t.Fatalf("small = %+v", d)
	}
	_, err = LookupDataset(testDatasets, "mmlu")
	errContains(t, err, `unknown dataset "mmlu"; known datasets: tiny, small`)
}

// SelectDatasets takes every dataset when none is named and refuses a
// name it does not know.
func TestSelectDatasets(t *testing.T) {
	all, err := SelectDatasets(testDatasets, nil)
	if err != nil || len(all) != len(testDatasets) {
		t.Errorf("SelectDatasets() = %v, %v; want every dataset", all, err)
	}
	if got, err := SelectDatasets(testDatasets, []string{"small"}); err != nil || len(got) != 1 || got[0].Name != "small" {
		t.Errorf("SelectDatasets(small) = %v, %v", got, err)
	}
	if _, err := SelectDatasets(testDatasets, []string{"small", "imagenet"}); err == nil || !strings.Contains(err.Error(), `unknown dataset "imagenet"`) {
		t.Errorf("unknown name: err = %v", err)
	}
}

// --url serves one dataset, named or the only one, and changes the
// selection's copy, never the registry's address.
func TestSelectDatasetsAt(t *testing.T) {
	name := testDatasets[0].Name
	published := testDatasets[0].URL
	sets, err := SelectDatasetsAt(testDatasets, []string{name}, "http://mirror.invalid/x")
	if err != nil || len(sets) != 1 || sets[0].URL != "http://mirror.invalid/x" || testDatasets[0].URL != published {
		t.Errorf("SelectDatasetsAt(%s, mirror) = %v, %v; registry URL %s", name, sets, err, testDatasets[0].URL)
	}
	if _, err := SelectDatasetsAt(testDatasets, []string{name, name}, "http://mirror.invalid/x"); !errors.As(err, new(usage.Error)) {
		t.Errorf("--url with two datasets: %v, want a usage error", err)
	}
	if _, err := SelectDatasetsAt(testDatasets, []string{"no-such-data"}, ""); !errors.As(err, new(usage.Error)) {
		t.Errorf("an unknown dataset: %v, want a usage error", err)
	}
}

// A dataset nobody named is found in the default cache only once a pull
// put it there whole: absent or of another size, there is none.
func TestCachedInDefault(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(CacheEnv, dir)
	d := Dataset{Name: "toy", File: "toy.json", Size: 3}
	if got := CachedInDefault(d); got != "" {
		t.Errorf("empty cache: %q, want none", got)
	}
	path := Cache{Dir: dir}.DatasetPath(d)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := CachedInDefault(d); got != "" {
		t.Errorf("a file of the wrong size: %q, want none", got)
	}
	if err := os.WriteFile(path, []byte("[1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := CachedInDefault(d); got != path {
		t.Errorf("pulled: %q, want %q", got, path)
	}
}
