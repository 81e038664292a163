package buildinfo

import (
	"os"
	"strings"
	"testing"
)

func TestOllamaVersionMatchesGoMod(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	want := OllamaModule + " " + OllamaVersion
	if !strings.Contains(string(data), want) {
		t.Errorf("go.mod does not require %s; update OllamaVersion", want)
	}
}
