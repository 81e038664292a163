package models

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedrun/feedrun/internal/usage"
)

// Dataset is a public data file an environment reads, fetched over HTTP
// into the cache beside the models, with the same resume, progress and
// checks as a model download. Each environment declares the datasets it
// reads in its registry entry; this package knows none by name.
type Dataset struct {
	Name   string // what `feedrun data pull` calls it
	File   string // its name in the cache's data folder
	URL    string // where it is published
	Size   int64
	SHA256 string
	Note   string
}

// LookupDataset returns the dataset of all called name.
func LookupDataset(all []Dataset, name string) (Dataset, error) {
	var names []string
	for _, d := range all {
		if d.Name == name {
			return d, nil
		}
		names = append(names, d.Name)
	}
	return Dataset{}, fmt.Errorf("unknown dataset %q; known datasets: %s", name, strings.Join(names, ", "))
}

// SelectDatasets is the datasets of all that names name, in their order;
// with no name, every dataset.
func SelectDatasets(all []Dataset, names []string) ([]Dataset, error) {
	if len(names) == 0 {
		return all, nil
	}
	var out []Dataset
	for _, n := range names {
		d, err := LookupDataset(all, n)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// SelectDatasetsAt is SelectDatasets, each fetched from url instead of its
// published address where url is given (a mirror, or a test server; the
// size and sha256 checks stay), which serves one dataset only. The
// datasets are copies: url changes this pull's, not the registry's.
// Names that are not datasets, or a url for several, are the user's to
// fix.
func SelectDatasetsAt(all []Dataset, names []string, url string) ([]Dataset, error) {
	n := len(names)
	if n == 0 {
		n = len(all) // none named: every one
	}
	if url != "" && n != 1 {
		return nil, usage.Errorf("--url: name the one dataset it serves (got %d)", n)
	}
	sets, err := SelectDatasets(all, names)
	if err != nil {
		return nil, usage.Error{Err: err}
	}
	sets = slices.Clone(sets)
	if url != "" {
		sets[0].URL = url
	}
	return sets, nil
}

// DatasetPath is where d's file is, or will be once pulled: under data/ in
// the cache, apart from the model files.
func (c Cache) DatasetPath(d Dataset) string {
	return filepath.Join(c.Dir, "data", d.File)
}

// CachedDataset returns the path of d's file when it is in the cache. As
// with models, only a checked download is ever renamed to that path, so
// presence and size are enough.
func (c Cache) CachedDataset(d Dataset) (string, bool) {
	path := c.DatasetPath(d)
	st, err := os.Stat(path)
	return path, err == nil && st.Mode().IsRegular() && st.Size() == d.Size
}

// CachedInDefault is the path of d's file in the default cache, or "" when
// there is no cache directory or d was not pulled: where a run, and a test,
// find a dataset nobody named.
func CachedInDefault(d Dataset) string {
	cache, err := DefaultCache()
	if err != nil {
		return ""
	}
	path, ok := cache.CachedDataset(d)
	if !ok {
		return ""
	}
	return path
}

// PullDataset puts d's file in the cache from d.URL, resuming a part file
// an interrupted pull left, and checking size and sha256 before the file
// takes its name.
func (f *Fetcher) PullDataset(ctx context.Context, d Dataset) (Pulled, error) {
	dest := f.Cache.DatasetPath(d)
	if path, ok := f.Cache.CachedDataset(d); ok {
		return Pulled{Name: d.Name, Path: path, SHA256: d.SHA256, Size: d.Size, Cached: true}, nil
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return Pulled{}, fmt.Errorf("pull %s: %w", d.Name, err)
	}
	unlock, err := f.lock(ctx, d.Name, dest)
	if err != nil {
		return Pulled{}, err
	}
	defer unlock()
	if path, ok := f.Cache.CachedDataset(d); ok {
		f.statusf("pull %s: another pull put it in the cache meanwhile", d.Name)
		return Pulled{Name: d.Name, Path: path, SHA256: d.SHA256, Size: d.Size, Cached: true}, nil
	}
	f.statusf("pull %s: fetching %s", d.Name, d.URL)
	sum, size, err := f.fetchHTTP(ctx, d.URL, "", dest, d.File, expected{size: d.Size, sha256: d.SHA256})
	if errors.Is(err, ErrNotPublished) {
		// A dataset has one address, the published one or --url: bytes
		// that are not the recorded file are the address's fault, a usage
		// error, not a failure to retry.
		return Pulled{}, usage.Error{Err: fmt.Errorf("pull %s from %s: %w", d.Name, d.URL, err)}
	}
	if err != nil {
		return Pulled{}, fmt.Errorf("pull %s: %w", d.Name, err)
	}
	f.statusf("pull %s: fetched into %s", d.Name, dest)
	return Pulled{Name: d.Name, Path: dest, Source: d.URL, SHA256: sum, Size: size}, nil
}
