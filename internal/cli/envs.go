package cli

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/feedrun/feedrun/envs/coderepair"
	"github.com/feedrun/feedrun/envs/toolshed"
	"github.com/feedrun/feedrun/internal/probe"
	"github.com/feedrun/feedrun/internal/transcript"
)

// Environment names accepted by --env.
const (
	envToolShed   = "toolshed"
	envCodeRepair = "coderepair"
)

// environment is what the commands need of ToolShed or CodeRepair.
type environment struct {
	Name string
	// DatasetSHA256 identifies the data the items come from: the MBPP file,
	// or ToolShed's own generator (its tasks hashed).
	DatasetSHA256 string
	Items         func(ctx context.Context, seed uint64, n int) ([]transcript.Item, error)
	// NearRepeat compares a generated reply with a failed action after
	// the environment's normalisation.
	NearRepeat func(generated, failed string) bool
	// Execute and Describe make on-policy items.
	Execute   probe.Executor
	Describe  func(transcript.StructuredError) string
	MaxTokens int
}

// openEnv resolves --env; mbpp is the sanitized MBPP file CodeRepair reads.
func openEnv(name, mbpp string) (*environment, error) {
	switch name {
	case envToolShed:
		return &environment{
			Name:          envToolShed,
			DatasetSHA256: toolshedDigest(),
			Items: func(_ context.Context, seed uint64, n int) ([]transcript.Item, error) {
				return toolshed.Items(seed, n), nil
			},
			NearRepeat: func(generated, failed string) bool {
				g, okG := toolshed.NormalizeCall(generated)
				f, okF := toolshed.NormalizeCall(failed)
				return okG && okF && g == f
			},
			Execute:   toolshedExecute,
			Describe:  toolshed.Describe,
			MaxTokens: 96,
		}, nil
	case envCodeRepair:
		if mbpp == "" {
			return nil, Usagef("--env coderepair needs --mbpp PATH: the sanitized MBPP file (sanitized-mbpp.json from the google-research repository)")
		}
		ds, err := coderepair.Load(mbpp)
		if err != nil {
			return nil, UsageError{err}
		}
		return &environment{
			Name:          envCodeRepair,
			DatasetSHA256: ds.SHA256,
			Items: func(ctx context.Context, seed uint64, n int) ([]transcript.Item, error) {
				sb, err := coderepair.NewSandbox(coderepair.Config{})
				if err != nil {
					return nil, err
				}
				return coderepair.Items(ctx, sb, ds.Problems, int64(seed), n)
			},
			NearRepeat: func(generated, failed string) bool {
				return coderepair.NormalizeCode(coderepair.ExtractCode(generated)) == coderepair.NormalizeCode(failed)
			},
			Execute: func(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
				sb, err := coderepair.NewSandbox(coderepair.Config{})
				if err != nil {
					return "", nil, err
				}
				for _, p := range ds.Problems {
					if fmt.Sprintf("mbpp-%d", p.TaskID) == it.TaskID {
						res, err := sb.Run(context.Background(), p, coderepair.ExtractCode(action))
						if err != nil || res.Passed {
							return res.Observation, nil, err
						}
						return res.Observation, &res.Error, nil
					}
				}
				return "", nil, fmt.Errorf("coderepair: no problem %s", it.TaskID)
			},
			Describe:  coderepair.Describe,
			MaxTokens: 384,
		}, nil
	default:
		return nil, Usagef("unknown environment %q: expected toolshed or coderepair", name)
	}
}

// toolshedDigest hashes ToolShed's task set, so a manifest shows whether
// two runs saw the same tasks.
func toolshedDigest() string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n", toolshed.SystemPrompt())
	for _, t := range toolshed.Tasks() {
		fmt.Fprintf(h, "%s\x00%s\x00%q\n", t.ID, t.Prompt, t.Steps)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func fileSHA256(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]), nil
}

// toolshedExecute replays the item's earlier correct steps on a fresh
// episode of its task, then runs action where the context leaves off.
func toolshedExecute(it transcript.Item, action string) (string, *transcript.StructuredError, error) {
	for _, t := range toolshed.Tasks() {
		if t.ID != it.TaskID {
			continue
		}
		ep := toolshed.NewEpisode(t)
		for _, m := range it.Context {
			if m.Role == transcript.RoleAssistant {
				ep.Execute(m.Content)
			}
		}
		obs, failure, _ := ep.Execute(action)
		return obs, failure, nil
	}
	return "", nil, fmt.Errorf("toolshed: no task %s", it.TaskID)
}
