package health

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/registry"
)

// ProbeName is the program name under which opm is grpc_health_probe.
const ProbeName = "grpc_health_probe"

// IsProbe reports whether argv0 (os.Args[0]) names grpc_health_probe, as
// when opm runs through the serving image's /bin/grpc_health_probe link.
func IsProbe(argv0 string) bool {
	base := filepath.Base(argv0)
	return base == ProbeName || base == ProbeName+".exe"
}

// ProbeMain is grpc_health_probe: it parses args (without the program
// name) as that probe does, Go-style, so -addr=:50051 and --addr :50051
// both work, probes, and returns the exit status: 0 with "status: SERVING"
// on stdout, else grpc_health_probe's code with one line on stderr.
func ProbeMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var o registry.ProbeOptions
	fs := flag.NewFlagSet(ProbeName, flag.ContinueOnError)
	fs.SetOutput(stderr)
	// The same flags as `opm registry health`, defined once through pflag
	// and offered to Go's flag package, whose parsing is the probe's.
	pfs := pflag.NewFlagSet(ProbeName, pflag.ContinueOnError)
	addFlags(pfs, &o)
	pfs.VisitAll(func(f *pflag.Flag) {
		var v flag.Value = f.Value
		if f.Value.Type() == "bool" {
			// Go's parser takes -tls without a value only from a flag.Value
			// that says it is boolean.
			v = boolValue{f.Value}
		}
		fs.Var(v, f.Name, f.Usage)
	})
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return int(registry.ProbeInvalidOptions)
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "error: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return int(registry.ProbeInvalidOptions)
	}
	if o.Addr == "" {
		fmt.Fprintln(stderr, "error: -addr is required: HOST:PORT of the server to probe")
		return int(registry.ProbeInvalidOptions)
	}
	err := registry.Probe(ctx, o)
	var pe *registry.ProbeError
	switch {
	case err == nil:
		fmt.Fprintln(stdout, "status: SERVING")
		return 0
	case errors.As(err, &pe):
		fmt.Fprintln(stderr, "error:", pe.Reason)
		return pe.ExitCode()
	}
	fmt.Fprintln(stderr, "error:", err)
	return int(registry.ProbeInvalidOptions)
}

// boolValue is a pflag boolean as a Go flag boolean.
type boolValue struct{ pflag.Value }

func (boolValue) IsBoolFlag() bool { return true }

// String is also called on a zero boolValue, for the usage text.
func (b boolValue) String() string {
	if b.Value == nil {
		return "false"
	}
	return b.Value.String()
}
