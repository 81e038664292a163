package bfcl

import (
	"errors"
	"strings"
	"testing"

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
		{[]string{"mode", "entry"}, "-o bfcl.mode=entry: whole-entry mode is not built yet"},
		{[]string{"mode", "session"}, "-o bfcl.mode"},
	} {
		s := EnvEntry.Settings()
		set(t, s, c.args[0], c.args[1])
		err := s.Check(env.ToRun)
		if !errors.As(err, new(usage.Error)) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: Check = %v, want a usage error holding %q", c.args, err, c.want)
		}
	}
	s := EnvEntry.Settings().(*Settings)
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
	if err := s.Record(&c); err != nil {
		t.Fatal(err)
	}
	var got recorded
	if ok, err := c.EnvSettings(Name, &got); !ok || err != nil || got != (recorded{Mode: "turn", Version: Version, WheelSHA256: Wheel.SHA256}) {
		t.Errorf("recorded under bfcl: %+v (found %v, %v); want mode turn, version %s and the wheel's digest", got, ok, err, Version)
	}
}

// set gives the setting key of s the value v, as -o bfcl.KEY=v does.
func set(t *testing.T, s env.Settings, key, v string) {
	t.Helper()
	for _, o := range s.Options(env.ToRun) {
		if o.Key == key {
			if err := o.Value.Set(v); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no setting %q", key)
}
