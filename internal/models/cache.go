package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CacheEnv names the environment variable that overrides the cache directory.
const CacheEnv = "FEEDRUN_CACHE"

// CacheDir returns $FEEDRUN_CACHE, or feedrun under os.UserCacheDir.
func CacheDir() (string, error) {
	if dir := os.Getenv(CacheEnv); dir != "" {
		return dir, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("model cache: %w (set %s)", err, CacheEnv)
	}
	return filepath.Join(base, "feedrun"), nil
}

// Cache is a directory of model files, each under its registry file name.
type Cache struct {
	Dir string
}

// DefaultCache is the cache at CacheDir.
func DefaultCache() (Cache, error) {
	dir, err := CacheDir()
	return Cache{Dir: dir}, err
}

// Path is where m's file is, or will be once pulled.
func (c Cache) Path(m Model) string {
	return filepath.Join(c.Dir, m.File)
}

// InCache reports whether m's file is in the cache. Only verified downloads
// are ever renamed to that path, so this checks presence and, when recorded,
// size, without the cost of hashing; Verify rehashes.
func (c Cache) InCache(m Model) bool {
	st, err := os.Stat(c.Path(m))
	return err == nil && st.Mode().IsRegular() && (m.Size == 0 || st.Size() == m.Size)
}

// VerifyState is the outcome of checking one cached file.
type VerifyState string

const (
	VerifyOK       VerifyState = "ok"
	VerifyMismatch VerifyState = "mismatch"
	VerifyMissing  VerifyState = "missing"
	// VerifyUnrecorded: the file is present but models.yaml records no
	// sha256 to compare it with.
	VerifyUnrecorded VerifyState = "unrecorded"
)

// Verification is the result of Verify for one model.
type Verification struct {
	Model string
	Path  string
	State VerifyState
	Want  string // recorded sha256, if any
	Got   string // computed sha256; empty when missing
	Size  int64  // bytes on disk
}

// Failed reports whether the check failed: the file is not the one
// models.yaml records, or it is missing though the model was asked for by
// name (named); a model checked only as one of the registry's may be
// missing, since not every model is pulled.
func (v Verification) Failed(named bool) bool {
	return v.State == VerifyMismatch || v.State == VerifyMissing && named
}

// Verify recomputes the sha256 of m's cached file and compares it, and the
// size, with what models.yaml records.
func (c Cache) Verify(ctx context.Context, m Model) (Verification, error) {
	v := Verification{Model: m.Name, Path: c.Path(m), Want: m.SHA256}
	sum, size, err := hashFile(ctx, v.Path)
	if errors.Is(err, fs.ErrNotExist) {
		v.State = VerifyMissing
		return v, nil
	}
	if err != nil {
		return v, fmt.Errorf("verify %s: %w", m.Name, err)
	}
	v.Got, v.Size = sum, size
	switch {
	case (m.SHA256 != "" && sum != m.SHA256) || (m.Size != 0 && size != m.Size):
		v.State = VerifyMismatch
	case m.SHA256 == "":
		v.State = VerifyUnrecorded
	default:
		v.State = VerifyOK
	}
	return v, nil
}

func hashFile(ctx context.Context, path string) (string, int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		return "", 0, fmt.Errorf("hash %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// ctxReader makes long copies stop soon after ctx is cancelled.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
