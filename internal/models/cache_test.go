package models

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestCacheDir(t *testing.T) {
	t.Setenv(CacheEnv, "/data/feedrun-cache")
	dir, err := CacheDir()
	ok(t, err)
	if dir != "/data/feedrun-cache" {
		t.Fatalf("CacheDir with %s set = %q", CacheEnv, dir)
	}

	t.Setenv(CacheEnv, "")
	base, err := os.UserCacheDir()
	ok(t, err)
	dir, err = CacheDir()
	ok(t, err)
	if want := filepath.Join(base, "feedrun"); dir != want {
		t.Fatalf("CacheDir = %q, want %q", dir, want)
	}
}

func TestInCache(t *testing.T) {
	content := testGGUF(t)
	c := Cache{Dir: t.TempDir()}
	m := testModel(content)
	if c.InCache(m) {
		t.Fatal("InCache on an empty cache")
	}
	ok(t, os.WriteFile(c.Path(m), content[:100], 0o644))
	if c.InCache(m) {
		t.Fatal("InCache accepts a file of the wrong size")
	}
	ok(t, os.WriteFile(c.Path(m), content, 0o644))
	if !c.InCache(m) {
		t.Fatal("InCache misses the file")
	}
	m.Size = 0
	if !c.InCache(m) {
		t.Fatal("InCache misses a file whose size is not recorded")
	}
}

func TestVerify(t *testing.T) {
	content := testGGUF(t)
	damaged := append([]byte{}, content...)
	damaged[len(damaged)/2] ^= 1
	tests := []struct {
		name   string
		file   []byte // nil: no file
		sha256 string
		want   VerifyState
	}{
		{"ok", content, sum(content), VerifyOK},
		{"damaged", damaged, sum(content), VerifyMismatch},
		{"short", content[:100], sum(content), VerifyMismatch},
		{"missing", nil, sum(content), VerifyMissing},
		{"nothing recorded", content, "", VerifyUnrecorded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Cache{Dir: t.TempDir()}
			m := testModel(content)
			m.SHA256 = tt.sha256
			if tt.file != nil {
				ok(t, os.WriteFile(c.Path(m), tt.file, 0o644))
			}
			v, err := c.Verify(context.Background(), m)
			ok(t, err)
			if v.State != tt.want || v.Path != c.Path(m) || v.Want != tt.sha256 {
				t.Fatalf("Verify = %+v, want state %s", v, tt.want)
			}
			if tt.file != nil && (v.Got != sum(tt.file) || v.Size != int64(len(tt.file))) {
				t.Fatalf("Verify = %+v, want got %s and size %d", v, sum(tt.file), len(tt.file))
			}
		})
	}
}

func TestVerifyCancelled(t *testing.T) {
	content := testGGUF(t)
	c := Cache{Dir: t.TempDir()}
	m := testModel(content)
	ok(t, os.WriteFile(c.Path(m), content, 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Verify(ctx, m); !errors.Is(err, context.Canceled) {
		t.Fatalf("Verify with a cancelled context = %v", err)
	}
}

// A mismatch always fails verification; a missing file only when the
// model was named, since verifying the whole registry meets models never
// pulled.
func TestVerificationFailed(t *testing.T) {
	for _, c := range []struct {
		state      VerifyState
		named, bad bool
	}{
		{VerifyOK, true, false}, {VerifyUnrecorded, true, false},
		{VerifyMismatch, false, true}, {VerifyMismatch, true, true},
		{VerifyMissing, false, false}, {VerifyMissing, true, true},
	} {
		if got := (Verification{State: c.state}).Failed(c.named); got != c.bad {
			t.Errorf("%s, named %v: failed %v, want %v", c.state, c.named, got, c.bad)
		}
	}
}
