package cli

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/feedrun/feedrun/internal/results"
)

// The cluster scripts cannot run here (make test-slurm runs the Slurm ones on
// a live one-node cluster); these tests keep them in step with what
// --shard auto reads.

// k8sJob is the part of a batch/v1 Job the scripts rely on.
type k8sJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Metadata   struct {
		Name string `yaml:"name"`
	} `yaml:"metadata"`
	Spec struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    *int   `yaml:"completions"`
		Template       struct {
			Spec struct {
				RestartPolicy  string         `yaml:"restartPolicy"`
				InitContainers []k8sContainer `yaml:"initContainers"`
				Containers     []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

type k8sContainer struct {
	Name    string   `yaml:"name"`
	Command []string `yaml:"command"`
	Args    []string `yaml:"args"`
	Env     []struct {
		Name  string `yaml:"name"`
		Value string `yaml:"value"`
	} `yaml:"env"`
}

func (c k8sContainer) env(name string) (string, bool) {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value, true
		}
	}
	return "", false
}

// readJobs decodes every YAML document of path; the tests then check that
// the fields they need are there.
func readJobs(t *testing.T, path string) []k8sJob {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var jobs []k8sJob
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var job k8sJob
		if err := dec.Decode(&job); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		jobs = append(jobs, job)
	}
	return jobs
}

const scriptsDir = "../../scripts"

func TestK8sIndexedJobSetsWhatShardAutoReads(t *testing.T) {
	jobs := readJobs(t, filepath.Join(scriptsDir, "k8s", "probe-indexed-job.yaml"))
	if len(jobs) != 1 {
		t.Fatalf("%d documents, want one Job", len(jobs))
	}
	job := jobs[0]
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		t.Errorf("apiVersion %q kind %q, want batch/v1 Job", job.APIVersion, job.Kind)
	}
	// Indexed mode is what makes Kubernetes set JOB_COMPLETION_INDEX.
	if job.Spec.CompletionMode != "Indexed" {
		t.Errorf("completionMode %q, want Indexed (it sets %s in each pod)", job.Spec.CompletionMode, results.EnvJobIndex)
	}
	if job.Spec.Template.Spec.RestartPolicy != "Never" && job.Spec.Template.Spec.RestartPolicy != "OnFailure" {
		t.Errorf("restartPolicy %q: a Job needs Never or OnFailure", job.Spec.Template.Spec.RestartPolicy)
	}
	cs := job.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("%d containers, want 1", len(cs))
	}
	c := cs[0]
	shards, ok := c.env(results.EnvShards)
	if !ok {
		t.Fatalf("container %s does not set %s", c.Name, results.EnvShards)
	}
	if n, err := strconv.Atoi(shards); err != nil || job.Spec.Completions == nil || n != *job.Spec.Completions {
		t.Errorf("%s=%q, want the Job's completions (%v)", results.EnvShards, shards, job.Spec.Completions)
	}
	if i := slices.Index(c.Args, "--shard"); i < 0 || i+1 >= len(c.Args) || c.Args[i+1] != shardAuto || c.Args[0] != "probe" {
		t.Errorf("args %q, want probe ... --shard auto", c.Args)
	}
	if _, ok := c.env(results.EnvSlurmTaskID); ok {
		t.Errorf("container sets %s; Kubernetes pods take their index from %s", results.EnvSlurmTaskID, results.EnvJobIndex)
	}
	// The merge Job joins the folder the shards write under.
	out := c.Args[slices.Index(c.Args, "--out")+1]
	merges := readJobs(t, filepath.Join(scriptsDir, "k8s", "merge-job.yaml"))
	if len(merges) != 1 || len(merges[0].Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("merge-job.yaml: want one Job with one container")
	}
	m := merges[0].Spec.Template.Spec.Containers[0]
	if run, _ := m.env("RUN"); run != out {
		t.Errorf("merge Job's RUN=%q, want the probe Job's --out %q", run, out)
	}
	script := strings.Join(m.Args, " ")
	for _, want := range []string{`feedrun merge --out "$RUN" "$RUN"/shards/`, `feedrun report "$RUN"`} {
		if !strings.Contains(script, want) {
			t.Errorf("merge Job's script %q lacks %q", script, want)
		}
	}
}

func TestSlurmScriptsUseShardAuto(t *testing.T) {
	directive := regexp.MustCompile(`(?m)^#SBATCH --([a-z-]+)=`)
	for _, c := range []struct {
		file, command string
	}{{"probe.sbatch", "probe"}, {"rollout.sbatch", "rollout"}, {"merge.sbatch", "merge"}} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(scriptsDir, "slurm", c.file))
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			var got []string
			for _, m := range directive.FindAllStringSubmatch(text, -1) {
				got = append(got, m[1])
			}
			for _, want := range []string{"cpus-per-task", "mem", "time"} {
				if !slices.Contains(got, want) {
					t.Errorf("no #SBATCH --%s= line (have %v)", want, got)
				}
			}
			if c.command != "merge" && !strings.Contains(text, `"${FEEDRUN_BIN:-feedrun}" `+c.command+" --shard auto ") {
				t.Errorf("does not run feedrun %s --shard auto", c.command)
			}
		})
	}
	submit, err := os.ReadFile(filepath.Join(scriptsDir, "slurm", "submit.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// Resubmitting one index (--array=2) only keeps its shard number when
	// the count comes from FEEDRUN_SHARDS rather than the array.
	if !strings.Contains(string(submit), results.EnvShards+"=$shards") {
		t.Errorf("submit.sh does not export %s to the tasks", results.EnvShards)
	}
}
