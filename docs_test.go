package feedrun

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docRef is a pointer into the documentation from anywhere in the
// repository: comments, help text, the config files and the docs
// themselves (docs/methodology.md#corrective-gain; not an absolute path
// such as a ToolShed file's /docs/wifi.md). mdLink is a relative Markdown
// link inside docs/, such as (runtime.md#threads-and-lanes).
var (
	docRef  = regexp.MustCompile(`(?:^|[^/\w])docs/([a-z]+\.md)(#[a-z0-9-]+)?`)
	mdLink  = regexp.MustCompile(`\]\(([a-z]+\.md)(#[a-z0-9-]+)?\)`)
	heading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
)

// anchor is GitHub's anchor for a heading: lower case, punctuation other
// than hyphens dropped, spaces as hyphens.
func anchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(h)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestDocPointersResolve fails when a comment, help text or document points
// at a docs/ file or heading that does not exist, so that renaming a
// heading cannot silently break the code's pointers into the docs. (Files
// that other work adds later, such as docs/cluster.md, are checked once
// they exist.)
func TestDocPointersResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		text, err := os.ReadFile(d)
		if err != nil {
			t.Fatal(err)
		}
		set := map[string]bool{}
		for _, m := range heading.FindAllStringSubmatch(string(text), -1) {
			set["#"+anchor(m[1])] = true
		}
		anchors[filepath.Base(d)] = set
	}
	if len(anchors["methodology.md"]) == 0 {
		t.Fatal("docs/methodology.md has no headings")
	}
	check := func(where, file, frag string) {
		set, ok := anchors[file]
		switch {
		case !ok && file == "cluster.md":
			// Written on another branch; the README points to it ahead.
		case !ok:
			t.Errorf("%s points to docs/%s, which does not exist", where, file)
		case frag != "" && !set[frag]:
			t.Errorf("%s points to docs/%s%s, which has no such heading", where, file, frag)
		}
	}
	n := 0
	err = filepath.WalkDir(".", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (path == "results" || path == ".git" || path == "bin") {
			return filepath.SkipDir
		}
		ext := filepath.Ext(path)
		if e.IsDir() || (ext != ".go" && ext != ".md" && ext != ".yaml") {
			return nil
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range docRef.FindAllStringSubmatch(string(text), -1) {
			check(path, m[1], m[2])
			n++
		}
		if filepath.Dir(path) == "docs" {
			for _, m := range mdLink.FindAllStringSubmatch(string(text), -1) {
				check(path, m[1], m[2])
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 20 {
		t.Fatalf("found only %d pointers into docs/; the scan is broken", n)
	}
}
