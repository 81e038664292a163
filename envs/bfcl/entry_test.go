package bfcl

import (
	"errors"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/internal/env"
	"github.com/feedrun/feedrun/internal/results"
	"github.com/feedrun/feedrun/internal/usage"
)

// Settings refuse, as usage errors naming the flag, a mode that is not
// built and one that does not exist; the wheel defaults to the cached one,
// and the manifest records its version, digest and the mode.
func TestSettings(t *testing.T) {
	wheel := wheelPath(t, Wheel)
	wheelPath(t, Mpmath)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--bfcl-mode", "entry"}, "--bfcl-mode entry: whole-entry mode is not built yet"},
		{[]string{"--bfcl-mode", "session"}, "--bfcl-mode"},
	} {
		s := EnvEntry.Settings()
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		s.Register(fs, env.ToRun)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := s.Check(env.ToRun)
		if !errors.As(err, new(usage.Error)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: Check = %v, want a usage error holding %q", c.args, err, c.want)
		}
	}
	s := EnvEntry.Settings().(*Settings)
	s.Register(pflag.NewFlagSet("x", pflag.ContinueOnError), env.ToRun)
	if err := s.Check(env.ToRun); err != nil || s.Wheel != wheel {
		t.Fatalf("Check = %v, wheel %q; want the cached %s", err, s.Wheel, wheel)
	}
	e, err := s.OpenTasks()
	if err != nil {
		t.Fatal(err)
	}
	defer e.(*Environment).Close()
	if e.DatasetSHA256() != Wheel.SHA256 {
		t.Errorf("dataset %s, want the wheel's digest", e.DatasetSHA256())
	}
	var c results.Config
	s.Record(&c)
	want := map[string]string{"bfcl_mode": "turn", "bfcl_version": Version, "bfcl_wheel_sha256": Wheel.SHA256}
	for k, v := range want {
		if c.EnvSettings[k] != v {
			t.Errorf("recorded %s = %q, want %q", k, c.EnvSettings[k], v)
		}
	}
}
