package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/spf13/cobra"
)

// settingsCmd is a command tree with one leaf whose flags show where each
// value came from.
func settingsCmd(got *map[string]string) *cobra.Command {
	root := &cobra.Command{Use: "feedrun"}
	leaf := &cobra.Command{Use: "probe", RunE: func(cmd *cobra.Command, _ []string) error {
		m := map[string]string{}
		for _, n := range []string{"items", "seed", "harness", "option"} {
			m[n] = cmd.Flags().Lookup(n).Value.String()
		}
		*got = m
		return nil
	}}
	leaf.Flags().Int("items", 10, "")
	leaf.Flags().Uint64("seed", 1, "")
	leaf.Flags().StringSlice("harness", []string{"verbatim"}, "")
	leaf.Flags().StringArrayP("option", "o", nil, "")
	root.AddCommand(leaf)
	return root
}

func TestSettingsPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("items: 20\nseed: 5\nprobe:\n  harness: [abstract, drop]\noption: [\"a.b=1,2\", a.c]\n"), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want map[string]string
	}{
		{"defaults", nil, []string{"probe"}, map[string]string{"items": "10", "seed": "1", "harness": "[verbatim]"}},
		// A list for a repeated flag (-o) gives one value per element, an
		// element's commas and all.
		{"config file", nil, []string{"probe", "--config", cfg}, map[string]string{"items": "20", "seed": "5", "harness": "[abstract,drop]", "option": `["a.b=1,2",a.c]`}},
		{"flag beats file", nil, []string{"probe", "--config", cfg, "-o", "a.d"}, map[string]string{"option": "[a.d]"}},
		{"environment beats file", map[string]string{"FEEDRUN_ITEMS": "30"}, []string{"probe", "--config", cfg}, map[string]string{"items": "30", "seed": "5", "harness": "[abstract,drop]"}},
		{"flag beats environment", map[string]string{"FEEDRUN_ITEMS": "30"}, []string{"probe", "--config", cfg, "--items", "40"}, map[string]string{"items": "40", "seed": "5", "harness": "[abstract,drop]"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			var got map[string]string
			root := settingsCmd(&got)
			var configPath string
			root.PersistentFlags().StringVar(&configPath, "config", "", "")
			root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error { return Resolve(cmd, configPath) }
			root.SetArgs(c.args)
			if err := root.Execute(); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Errorf("%s = %s, want %s", k, got[k], v)
				}
			}
		})
	}
}
