// Command feedrun is the experiment runner; see internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/feedrun/feedrun/internal/cli"
	"github.com/feedrun/feedrun/internal/iostreams"
)

func main() {
	// SIGTERM too: a scheduler's time limit or a deleted pod then stops a
	// run between items, with its files closed, as Ctrl-C does.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, iostreams.System(), os.Args[1:])
	stop()
	os.Exit(code)
}
