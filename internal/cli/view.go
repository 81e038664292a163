package cli

import (
	"context"
	"fmt"
	"net"
	"strings"

	"github.com/spf13/cobra"

	"github.com/feedrun/feedrun/internal/iostreams"
	"github.com/feedrun/feedrun/internal/runs"
	"github.com/feedrun/feedrun/internal/shown"
	"github.com/feedrun/feedrun/internal/usage"
	"github.com/feedrun/feedrun/internal/viewer"
)

// ViewOptions are the settings of `feedrun view`.
type ViewOptions struct {
	IO      *iostreams.IOStreams
	Dirs    []string
	Results string // where to look for run folders when Dirs is empty
	Addr    string
	// Remote allows an address other than a loopback one.
	Remote   bool
	readSpec // the environments' settings and --contexts
	// Serving, when set, is told the viewer's address once it listens
	// (tests); the command serves until its context ends.
	Serving func(url string)
}

func newViewCmd(f *Factory) *cobra.Command {
	opts := &ViewOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "view [DIR...]",
		Short: "Serve a viewer of run folders on localhost: a summary, filters, transcripts, side by side",
		Long: `Serve the viewer of the HTML report over HTTP, for run folders too many or
too large for one page. With no folder named, every run folder under
--results (default results/) is served. The page opens on a summary, a
row per run with its pass, exact-repeat and loop rates (or, for a probe
run, its greedy repeats after the failure and its share of G < 0); tick
runs, or choose a model, to list their episodes and items. A run's rows
are read when first asked for, not at start.

The address is printed on stderr; open it in a browser. It listens on
--addr (default 127.0.0.1:0, a free port) and refuses an address that is
not a loopback one unless --remote is given: the viewer shows everything
the folders hold to whoever can reach it. Ctrl-C stops it.

Transcripts open with their task as the environment states it
(ToolShed's from its task list, CodeRepair's from its data file). ToolShed probe
items are shown with their context, made again from the run's settings;
CodeRepair items only with --contexts, which runs their programs again
when their run is first opened (minutes).`,
		Example: `  feedrun view
  feedrun view results/rollout-qwen2.5-coder-0.5b-toolshed results/rollout-qwen2.5-coder-0.5b-toolshed-grammar-ladder --addr 127.0.0.1:8080`,
		Args: cobra.ArbitraryArgs,
		PreRunE: func(*cobra.Command, []string) error {
			if _, _, err := net.SplitHostPort(opts.Addr); err != nil {
				return usage.Errorf("--addr %q: expected host:port, such as 127.0.0.1:8080 (port 0: a free one)", opts.Addr)
			}
			if !opts.Remote && !viewer.IsLoopback(opts.Addr) {
				return usage.Errorf("--addr %q: expected a loopback address (127.0.0.1, [::1] or localhost); --remote serves the folders to other machines", opts.Addr)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Dirs = args
			return viewRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Results, "results", "results", "folder whose run folders are served when no DIR is given")
	fl.StringVar(&opts.Addr, "addr", "127.0.0.1:0", "address to listen on (host:port; port 0: a free one)")
	fl.BoolVar(&opts.Remote, "remote", false, "allow an --addr that is not a loopback one (anyone who reaches it reads the folders)")
	opts.register(fl, "give CodeRepair probe items their context too: makes the items again, running their programs (minutes per run)")
	return cmd
}

func viewRun(ctx context.Context, opts *ViewOptions) error {
	dirs, err := runs.Folders("view", opts.Dirs, opts.Results)
	if err != nil {
		return err
	}
	if len(dirs) == 0 {
		return usage.Errorf("no run folders under %s/: name folders (`feedrun view DIR...`) or make one with `make demo`", strings.TrimSuffix(opts.Results, "/"))
	}
	opts.Dirs = dirs
	srv, err := shown.Viewer(opts.Dirs, opts.Envs.Recorded, opts.Contexts, opts.IO.Statusf)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return usage.Errorf("--addr %s: %v", opts.Addr, err)
	}
	url := "http://" + ln.Addr().String() + "/"
	opts.IO.Statusf("feedrun view: %d run folders at %s (Ctrl-C stops)", len(opts.Dirs), url)
	if opts.IO.Quiet {
		// The address is the command's one output a user cannot do without.
		fmt.Fprintln(opts.IO.ErrOut, url)
	}
	if opts.Serving != nil {
		opts.Serving(url)
	}
	return srv.Serve(ctx, ln)
}
