package cli

import (
	"strings"
	"testing"

	"github.com/feedrun/feedrun/internal/iostreams"
)

// TestModelsListTellsSourcesApart checks that the listing shows where each
// checkpoint comes from, so the PyPI-shipped Coder files are not mistaken
// for the Hugging Face-only Qwen2.5 entry of the same size.
func TestModelsListTellsSourcesApart(t *testing.T) {
	t.Setenv("FEEDRUN_CACHE", t.TempDir())
	io, out, _ := iostreams.Test(false)
	if err := modelsListRun(&ModelsOptions{IO: io, ModelsFile: "../../models.yaml"}); err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		cells := strings.Split(line, "│")
		if len(cells) > 2 {
			rows[strings.TrimSpace(cells[1])] = line
		}
	}
	for name, want := range map[string][]string{
		"qwen2.5-coder-0.5b": {"Qwen2.5-Coder", "0.5B", "468.6 MiB", "pypi (6 wheels), huggingface"},
		"qwen2.5-coder-1.5b": {"Qwen2.5-Coder", "1.5B", "1.04 GiB", "pypi (22 wheels), huggingface"},
		"qwen2.5-0.5b":       {"Qwen2.5 ", "0.5B", " huggingface "},
		"gemma3-270m":        {"Gemma 3", "base", "pypi (4 wheels), huggingface"},
	} {
		row, ok := rows[name]
		if !ok {
			t.Fatalf("no row for %s in\n%s", name, out)
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("row %q lacks %q", row, w)
			}
		}
	}
}
