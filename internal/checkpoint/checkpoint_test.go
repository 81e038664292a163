package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/models"
)

// A checkpoint that is not in the cache, or is not the file models.yaml
// records, is refused before llama.cpp sees it, as the user's to fix, and
// the message says what to do.
func TestOpenRefusesWhatTheCacheLacks(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("FEEDRUN_CACHE", dir)
	entry := models.Model{Name: "tiny", File: "tiny.gguf", Size: 3,
		SHA256: "0000000000000000000000000000000000000000000000000000000000000000"}
	_, err := Open(context.Background(), entry, Options{})
	if !errors.As(err, new(Unusable)) || !strings.Contains(err.Error(), "run `feedrun models pull tiny`") {
		t.Errorf("missing file: err = %v, want Unusable saying to pull it", err)
	}
	cache, err := models.DefaultCache()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(cache.Path(entry)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cache.Path(entry), []byte("abc"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Open(context.Background(), entry, Options{})
	if !errors.As(err, new(Unusable)) || !strings.Contains(err.Error(), "does not match models.yaml's") {
		t.Errorf("other bytes: err = %v, want Unusable saying they do not match", err)
	}
}
