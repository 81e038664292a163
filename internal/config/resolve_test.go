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
		for _, n := range []string{"items", "seed", "harness"} {
			m[n] = cmd.Flags().Lookup(n).Value.String()
		}
		*got = m
		return nil
	}}
	leaf.Flags().Int("items", 10, "")
	leaf.Flags().Uint64("seed", 1, "")
	leaf.Flags().StringSlice("harness", []string{"verbatim"}, "")
	root.AddCommand(leaf)
	return root
}

func TestSettingsPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("items: 20\nseed: 5\nprobe:\n  harness: [abstract, drop]\n"), 0o644)
	cases := []struct {
		name string
		env  map[string]string
		args []string
		want map[string]string
	}{
		{"defaults", nil, []string{"probe"}, map[string]string{"items": "10", "seed": "1", "harness": "[verbatim]"}},
		{"config file", nil, []string{"probe", "--config", cfg}, map[string]string{"items": "20", "seed": "5", "harness": "[abstract,drop]"}},
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
