package results

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// committedManifests are the manifests of the run folders committed under
// results/ at the repository's root.
func committedManifests(t *testing.T) []string {
	t.Helper()
	paths := committedManifestsIn(t, filepath.Join("..", ".."))
	if len(paths) == 0 {
		t.Fatal("no committed manifests under results/")
	}
	return paths
}

// committedManifestsIn are the manifests under repo/results that git
// tracks. A run folder made there and never committed is its maker's, not
// a committed run: `make demo` writes results/demo-MODEL and the quick
// start results/try, and neither is named for its runner nor held to the
// committed runs' settings, so after either `make test` failed on it.
func committedManifestsIn(t *testing.T, repo string) []string {
	t.Helper()
	out, err := exec.Command("git", "-C", repo, "ls-files", "-z", "--", "results").Output()
	if err != nil {
		t.Fatalf("git ls-files in %s: %v (the committed runs are the files git tracks, so these tests need the git checkout)", repo, err)
	}
	var paths []string
	for _, name := range strings.Split(string(out), "\x00") {
		if path.Base(name) == ManifestName {
			paths = append(paths, filepath.Join(repo, filepath.FromSlash(name)))
		}
	}
	return paths
}

// A run folder under results/ that git does not track is not taken for a
// committed one: the demo's folder beside a committed probe.
func TestCommittedManifestsAreTrackedOnes(t *testing.T) {
	repo := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", repo, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	for _, dir := range []string{"probe-fake-toolshed-seed1", "demo-fake"} {
		ok(t, os.MkdirAll(filepath.Join(repo, "results", dir), 0o755))
		writeFile(t, filepath.Join(repo, "results", dir, ManifestName), "{}")
	}
	git("add", filepath.Join("results", "probe-fake-toolshed-seed1", ManifestName))
	git("commit", "-q", "-m", "a committed run")
	got := committedManifestsIn(t, repo)
	want := []string{filepath.Join(repo, "results", "probe-fake-toolshed-seed1", ManifestName)}
	if !slices.Equal(got, want) {
		t.Errorf("committed manifests %v, want %v", got, want)
	}
}

// Every committed manifest reads into the typed Config and writes back
// byte for byte as it is: rewriting a manifest (a resume's log, a merge)
// never adds, drops or reformats a setting.
func TestCommittedManifestsRoundTrip(t *testing.T) {
	for _, path := range committedManifests(t) {
		t.Run(path, func(t *testing.T) {
			dir := filepath.Dir(path)
			m, err := ReadManifest(dir)
			ok(t, err)
			out := t.TempDir()
			ok(t, WriteManifest(out, m))
			if got, want := readFile(t, filepath.Join(out, ManifestName)), readFile(t, path); got != want {
				t.Errorf("written back as\n%s\nwant\n%s", got, want)
			}
		})
	}
}

// runnerOf is the runner of a committed run folder, from its name.
func runnerOf(t *testing.T, path string) Runner {
	t.Helper()
	for _, r := range []Runner{RunnerProbe, RunnerRollout, RunnerSweep} {
		if strings.Contains(path, string(r)+"-") {
			return r
		}
	}
	t.Fatalf("%s: no runner in the folder's name", path)
	return ""
}

// The fields hold every committed setting: a Config made here from the
// fields alone, for the run's runner, writes each key the committed
// manifest has with the same value (and, for a run made before a setting
// existed, that setting beside them).
func TestCommittedSettingsAreFields(t *testing.T) {
	for _, path := range committedManifests(t) {
		t.Run(path, func(t *testing.T) {
			m, err := ReadManifest(filepath.Dir(path))
			ok(t, err)
			var raw struct{ Config map[string]json.RawMessage }
			ok(t, json.Unmarshal([]byte(readFile(t, path)), &raw))
			made := m.Config
			made.keys, made.other = nil, nil
			made.Runner = runnerOf(t, path)
			got, err := made.encoded()
			ok(t, err)
			for _, k := range slices.Sorted(maps.Keys(raw.Config)) {
				if !sameJSON(got[k], raw.Config[k]) {
					t.Errorf("config %s: the fields write %s, the manifest has %s", k, got[k], raw.Config[k])
				}
			}
		})
	}
}

// Report reads settings as fields: a committed rollout records its decode
// mode and whether its model is instruction-tuned, a probe its items'
// source, a sweep its grid.
func TestCommittedSettingsRead(t *testing.T) {
	for _, path := range committedManifests(t) {
		m, err := ReadManifest(filepath.Dir(path))
		ok(t, err)
		c := m.Config
		switch runnerOf(t, path) {
		case RunnerProbe:
			if c.Model == "" || c.Env == "" || len(c.Harness) == 0 || c.InstructionTuned == nil {
				t.Errorf("%s: probe settings read as %+v", path, c)
			}
			if c.OnPolicy != strings.Contains(path, "onpolicy") {
				t.Errorf("%s: on_policy read as %t", path, c.OnPolicy)
			}
		case RunnerRollout:
			if c.Model == "" || c.MaxSteps == 0 || c.InstructionTuned == nil || c.OnLoop == "" {
				t.Errorf("%s: rollout settings read as %+v", path, c)
			}
			if want := map[bool]string{true: DecodeGrammar, false: DecodeFree}[strings.Contains(path, "grammar")]; c.DecodeMode() != want {
				t.Errorf("%s: decode mode %q, want %q", path, c.DecodeMode(), want)
			}
		case RunnerSweep:
			if c.Agent == "" || len(c.RetryBudgets) == 0 || len(c.OnLoops) == 0 || c.Runs == 0 {
				t.Errorf("%s: sweep settings read as %+v", path, c)
			}
		}
	}
}

// A Config made for a runner records that runner's settings even when
// they are zero, and another runner's or an optional one only when set.
func TestConfigKeysOfARunner(t *testing.T) {
	keys := func(c Config) []string {
		t.Helper()
		enc, err := c.encoded()
		ok(t, err)
		return slices.Sorted(maps.Keys(enc))
	}
	probe := keys(Config{Runner: RunnerProbe})
	want := []string{"chat_template", "context", "env", "harness", "instruction_tuned", "items", "items_file", "model", "on_policy", "per_token", "seed"}
	if !slices.Equal(probe, want) {
		t.Errorf("a probe records %v, want %v", probe, want)
	}
	if got := keys(Config{Runner: RunnerProbe, UnsafeSandbox: true, Observations: "tool", EnvSettings: map[string]string{"k": "v"}}); !slices.Contains(got, "unsafe_sandbox") || !slices.Contains(got, "observations") || !slices.Contains(got, "env_settings") {
		t.Errorf("set optional settings are not recorded: %v", got)
	}
	data, err := Config{Runner: RunnerRollout}.MarshalJSON()
	ok(t, err)
	if s := string(data); !strings.Contains(s, `"demonstrations":[]`) || !strings.Contains(s, `"retries":0`) || !strings.Contains(s, `"on_loop":""`) {
		t.Errorf("a rollout's empty settings are written as %s", s)
	}
	data, err = Config{Runner: RunnerSweep, RetryBudgets: []int{0, 2}, OnLoops: []string{"stop"}}.MarshalJSON()
	ok(t, err)
	if s := string(data); !strings.Contains(s, `"retries":[0,2]`) || !strings.Contains(s, `"on_loop":["stop"]`) || strings.Contains(s, "instruction_tuned") {
		t.Errorf("a scripted sweep's settings are written as %s", s)
	}
}

// A setting of the wrong type is refused, naming the file, the field and
// what it expected; a key this build does not know is kept as it was.
func TestConfigReadChecksTypes(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, ManifestName), `{"config": {"on_policy": "yes"}}`)
	_, err := ReadManifest(dir)
	errContains(t, err, filepath.Join(dir, ManifestName), `config field on_policy: expected true or false, got "yes"`)

	writeFile(t, filepath.Join(dir, ManifestName), `{"config": {"env_settings": {"bfcl_mode": 1}}}`)
	_, err = ReadManifest(dir)
	errContains(t, err, `config field env_settings: expected an object of strings, got {"bfcl_mode": 1}`)

	writeFile(t, filepath.Join(dir, ManifestName), `{"config": {"items": 3, "later_setting": {"a": [1, 2.50]}}}`)
	m, err := ReadManifest(dir)
	ok(t, err)
	data, err := json.Marshal(m.Config)
	ok(t, err)
	if got, want := string(data), `{"items":3,"later_setting":{"a":[1,2.50]}}`; got != want {
		t.Errorf("written back as %s, want %s", got, want)
	}
}
