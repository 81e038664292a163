package results

import (
	"path/filepath"
	"testing"
)

// The default run folders are named by what sets a run apart; reports and
// the committed runs rely on these names.
func TestDefaultRunFolders(t *testing.T) {
	for got, want := range map[string]string{
		ProbeFolder("m", "toolshed", false, 1):  "probe-m-toolshed-seed1",
		ProbeFolder("m", "coderepair", true, 7): "probe-m-coderepair-onpolicy-seed7",
		RolloutFolder("m", "toolshed"):          "rollout-m-toolshed",
		SweepFolder(ScriptedAgentName):          "sweep-" + ScriptedAgentName,
	} {
		if want = filepath.Join("results", want); got != want {
			t.Errorf("folder %s, want %s", got, want)
		}
	}
}
