package report

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/feedrun/feedrun/internal/harness"
	"github.com/feedrun/feedrun/internal/runs"
)

// Reference is the study's published figures (configs/study_reference.yaml),
// shown beside ours. The file holds the study's numbers only: every number
// of ours is computed from the probe items.
type Reference struct {
	Figures []StudyFigure `yaml:"figures"`
	// Claims are the study's claims as the scorecard checks them.
	Claims []Claim `yaml:"claims"`
	// Sizes is each model's parameters as models.yaml gives them ("135M",
	// "0.5B"), by model name. It is not part of the file: the caller sets
	// it from the model registry, so that a figure scoped to a size stands
	// beside that size's rows only. A model missing here has no known size.
	Sizes map[string]string `yaml:"-"`
	// Level is the report's interval level, for the intervals a verdict
	// makes itself (finished − passed); like Sizes, the caller sets it.
	Level float64 `yaml:"-"`
}

// StudyFigure is one figure the study reports, as it reports it.
type StudyFigure struct {
	// Figure is the id of our figure it compares with (the CSV output's
	// figure column, e.g. "gain_per_token").
	Figure string `yaml:"figure"`
	// Value is the figure as published ("-1.03", "90–100%", "slightly
	// positive"): text, because some of the study's figures are ranges or
	// words, and a reference column must not invent precision.
	Value    string `yaml:"value"`
	Measures string `yaml:"measures"`
	Scope    Scope  `yaml:"scope"`
	Source   string `yaml:"source"`
}

// Scope says which rows a study figure applies to; "all" matches any.
type Scope struct {
	Env     string `yaml:"env"`
	Harness string `yaml:"harness"`
	// Parameters, when set, is the model size the study measured the
	// figure at (its rollouts ran 0.5B agents): the figure stands only
	// beside rows of a model of that size; "" is any size.
	Parameters string `yaml:"parameters"`
}

// all is the scope value that matches every env or harness.
const all = "all"

// ReadReference reads and checks a study reference file.
func ReadReference(path string) (Reference, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Reference{}, err
	}
	return ParseReference(path, data)
}

// ParseReference checks reference data read from name (a path, or a label
// for the copy built into feedrun).
func ParseReference(path string, data []byte) (Reference, error) {
	var ref Reference
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&ref); err != nil {
		return Reference{}, fmt.Errorf("%s: %w", path, err)
	}
	if err := ref.check(); err != nil {
		return Reference{}, fmt.Errorf("%s: %w", path, err)
	}
	return ref, nil
}

func (r Reference) check() error {
	seen := map[StudyFigure]int{}
	for i, f := range r.Figures {
		at := fmt.Sprintf("figures[%d]", i)
		switch {
		case !slices.Contains(referableFigures(), f.Figure):
			return fmt.Errorf("%s: figure %q: expected one of %v", at, f.Figure, referableFigures())
		case f.Value == "" || f.Measures == "" || f.Source == "":
			return fmt.Errorf("%s (%s): value, measures and source are all required", at, f.Figure)
		case f.Scope.Env == "":
			return fmt.Errorf("%s (%s): scope.env: expected an env name or %q", at, f.Figure, all)
		case f.Scope.Harness != all && !slices.Contains(harness.RolloutHarnesses, harness.Name(f.Scope.Harness)):
			return fmt.Errorf("%s (%s): scope.harness: expected one of %s or %s, got %q", at, f.Figure, harness.JoinNames(harness.RolloutHarnesses), all, f.Scope.Harness)
		case f.Scope.Parameters != "" && !parametersPattern.MatchString(f.Scope.Parameters):
			return fmt.Errorf("%s (%s): scope.parameters: expected a size as models.yaml gives it (e.g. 0.5B, 135M), got %q", at, f.Figure, f.Scope.Parameters)
		}
		key := StudyFigure{Figure: f.Figure, Scope: f.Scope}
		if j, ok := seen[key]; ok {
			return fmt.Errorf("%s: same figure and scope as figures[%d]", at, j)
		}
		seen[key] = i
	}
	ids := map[string]int{}
	for i, c := range r.Claims {
		if err := c.check(); err != nil {
			return fmt.Errorf("claims[%d] (%s): %w", i, c.ID, err)
		}
		if j, ok := ids[c.ID]; ok {
			return fmt.Errorf("claims[%d]: id %q is also claims[%d]'s", i, c.ID, j)
		}
		ids[c.ID] = i
	}
	return nil
}

// parametersPattern is a model size as models.yaml writes it.
var parametersPattern = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?[MB]$`)

// Lookup is the study's figure for our figure on one model, env and
// harness, or "" when the study has none. An entry scoped to a size
// matches only a model whose size (Sizes) is that size. When several
// entries match, the most specific wins: an exact env and harness, then an
// exact harness, then an exact env.
func (r Reference) Lookup(figure, model, env string, h harness.Name) string {
	// Nothing says the study's figures were measured on a model's own
	// failing attempts (SmolLM2's are mostly prose, not calls): they stand
	// beside the generator's rows, never an on-policy run's.
	// Nor beside a run that put observations in tool turns: the study's
	// agents saw them as user turns.
	if strings.HasSuffix(env, runs.OnPolicySuffix) || strings.Contains(env, runs.ToolObservationsSuffix) {
		return ""
	}
	env = scopeEnv(env)
	best, bestRank := "", -1
	for _, f := range r.Figures {
		envOK := f.Scope.Env == env || f.Scope.Env == all
		harnessOK := f.Scope.Harness == string(h) || f.Scope.Harness == all
		sizeOK := f.Scope.Parameters == "" || f.Scope.Parameters == r.Sizes[model]
		if f.Figure != figure || !envOK || !harnessOK || !sizeOK {
			continue
		}
		rank := 0
		if f.Scope.Harness == string(h) {
			rank += 2
		}
		if f.Scope.Env == env {
			rank++
		}
		if rank > bestRank {
			best, bestRank = f.Value, rank
		}
	}
	return best
}

// scopeEnv is the environment a table row's env label names: a rollout row
// of a constrained run reads "toolshed (grammar)", which the study's
// ToolShed figures still scope.
func scopeEnv(label string) string {
	if i := strings.Index(label, " ("); i >= 0 {
		return label[:i]
	}
	return label
}
