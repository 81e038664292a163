// Command feedrun is the experiment runner; see internal/cli.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/feedrun/feedrun/internal/cli"
	"github.com/feedrun/feedrun/internal/iostreams"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := cli.Execute(ctx, iostreams.System(), os.Args[1:])
	stop()
	os.Exit(code)
}
