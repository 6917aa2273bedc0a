// Command opm packages Kubernetes operators for OLM: it validates bundles
// and CSVs, builds bundle and index images, and manages sqlite indexes.
// The commands live in internal/cmd; this is only the process's entry.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
)

func main() {
	// An interrupt cancels the run's context; commands stop, clean up and
	// return exit.Interrupted (130).
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := root.Run(ctx, factory.New(iostreams.System()), os.Args[1:])
	stop()
	os.Exit(code)
}
