package config

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// The edges of each range are accepted: the bounds are not off by one.
func TestCheckBoundsAcceptsTheEdges(t *testing.T) {
	cases := []struct {
		args []string
		ok   bool
	}{
		{[]string{"--n", "0", "--threads", "0", "--list", "0,7"}, true},
		{[]string{"--n", "0", "--threads", "512", "--list", "7"}, true},
		{[]string{"--n", "-1"}, false},
		{[]string{"--threads", "513"}, false},
		{[]string{"--list", "8"}, false},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			cmd := &cobra.Command{Use: "x", RunE: func(*cobra.Command, []string) error { return nil }}
			fs := cmd.Flags()
			fs.Int("n", 3, "")
			fs.Int("threads", 0, "")
			fs.IntSlice("list", []int{1}, "")
			Bound(fs, "n", 0, Unbounded)
			Bound(fs, "threads", 0, 512)
			Bound(fs, "list", 0, 7)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			if err := CheckBounds(cmd); (err == nil) != c.ok {
				t.Errorf("CheckBounds = %v, want ok=%v", err, c.ok)
			}
		})
	}
}
