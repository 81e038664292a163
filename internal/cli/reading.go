package cli

import (
	"github.com/spf13/pflag"

	"github.com/feedrun/feedrun/envs"
	"github.com/feedrun/feedrun/internal/env"
)

// readSpec is what the commands that read run folders (report, show,
// view, export) share: the environments' own settings, which stating
// their tasks and making their items again may need (their data files),
// and --contexts, which makes CodeRepair items again for their context
// (slow: it runs their programs; ToolShed's are always made).
type readSpec struct {
	Envs     envs.Spec
	Contexts bool
}

// register adds --contexts, with the command's help for it, and every
// environment's settings to fs.
func (r *readSpec) register(fs *pflag.FlagSet, contexts string) {
	fs.BoolVar(&r.Contexts, "contexts", false, contexts)
	r.Envs.RegisterSettings(fs, env.ToRead)
}
