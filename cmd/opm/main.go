// Command opm packages Kubernetes operators for OLM: it validates bundles
// and CSVs, builds bundle and index images, and manages sqlite indexes.
// The commands live in internal/cmd; this is only the process's entry.
package main

import (
	"os"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/registry/health"
	"github.com/opmkit/opm/internal/cmd/root"
	"github.com/opmkit/opm/internal/iostreams"
)

func main() {
	// SIGINT or SIGTERM cancels the run's context; commands stop, clean up
	// and return; the exit status is 130 or 143 (`registry serve` stops
	// gracefully and exits 0, as a pod's server should).
	ctx, stop := exit.SignalContext()
	var code int
	if health.IsProbe(os.Args[0]) {
		// The serving image's /bin/grpc_health_probe is a link to opm.
		code = health.ProbeMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	} else {
		code = root.Run(ctx, factory.New(iostreams.System()), os.Args[1:])
	}
	stop()
	os.Exit(code)
}
