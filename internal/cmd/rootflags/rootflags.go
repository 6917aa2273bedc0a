// Package rootflags holds the flags every opm command has (upstream's
// root flags --skip-tls-verify, --use-http, --skip-tls and --debug, and
// --timeout) and what is applied before any command runs: those flags,
// the deprecation notes of flags, the --timeout deadline and the check of
// --ca-file.
package rootflags

import (
	"context"
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/image"
)

// Root flags upstream opm v1.73.0 had on every command. Commands that talk
// to registries declare --skip-tls-verify and --use-http themselves; those
// local flags take the value wherever it is given on the command line, and
// the root's are accepted (and mean nothing) on every other command.
const (
	flagSkipTLS = "skip-tls"
	flagDebug   = "debug"
)

// Add adds the flags to the root command.
func Add(root *cobra.Command) {
	pf := root.PersistentFlags()
	pf.Bool(image.FlagSkipTLSVerify, false, "skip TLS certificate verification for registries (commands that use no registry ignore it)")
	pf.Bool(image.FlagUseHTTP, false, "use plain HTTP for registries (commands that use no registry ignore it)")
	pf.Bool(flagSkipTLS, false, "use plain HTTP for registries, as upstream opm made of this flag")
	config.Deprecate(pf, flagSkipTLS, "use --use-http (or --skip-tls-verify) instead")
	pf.Bool(flagDebug, false, "print more detail on stderr: the command's settings and the chain of a failure's causes")
	_ = pf.MarkHidden(flagDebug)
	pf.String(image.FlagSignaturePolicy, "", "containers policy.json every image pull is verified against (commands that pull nothing ignore it; default: ~/.config/containers/policy.json, then /etc/containers/policy.json)")
	pf.Duration(flagTimeout, 0, "stop the command after this long (for example 10m): it stops its fetches, rolls back what it was writing, says what was written (alpha mirror keeps what arrived, to resume) and exits 124; 0 means no limit")
}

// flagTimeout bounds a whole run.
const flagTimeout = "timeout"

// Server is the annotation (set to "true") of a command that runs until it
// is stopped (opm serve, opm registry serve): it stops gracefully when the
// run's context ends and returns no error, so --timeout running out is
// told by the context, and still exits 124 as for every command.
const Server = "opm.dev/server"

// ApplyTimeout gives cmd's context the --timeout deadline.
func ApplyTimeout(cmd *cobra.Command) error {
	fl := cmd.Flags().Lookup(flagTimeout)
	if fl == nil {
		return nil
	}
	d, err := cmd.Flags().GetDuration(flagTimeout)
	if err != nil {
		return exit.Usagef("--%s: %v", flagTimeout, err)
	}
	if d < 0 {
		return exit.Usagef("--%s %s: give a positive duration such as 30s or 10m, or 0 for no limit", flagTimeout, d)
	}
	if d == 0 {
		return nil
	}
	// The run ends with the process, and the timer with it; the cause
	// tells Run why the context ended.
	ctx, cancel := context.WithCancelCause(cmd.Context())
	time.AfterFunc(d, func() { cancel(exit.TimeoutError{After: d}) })
	cmd.SetContext(ctx)
	return nil
}

// Apply turns upstream's deprecated --skip-tls into --use-http,
// as upstream did, refusing it together with the flags it conflicts with,
// and prints the settings under --debug.
func Apply(f *factory.Factory, cmd *cobra.Command) error {
	fl := cmd.Flags()
	fl.VisitAll(func(p *pflag.Flag) {
		if advice := p.Annotations[config.DeprecatedAnnotation]; p.Changed && len(advice) > 0 {
			fmt.Fprintf(f.IO.ErrOut, "%s --%s is deprecated: %s\n", f.IO.ErrTheme().NotePrefix(), p.Name, advice[0])
		}
	})
	if fl.Lookup(flagSkipTLS) != nil && fl.Changed(flagSkipTLS) {
		for _, other := range []string{image.FlagUseHTTP, image.FlagSkipTLSVerify} {
			if fl.Changed(other) {
				return exit.Usagef("--%s cannot be combined with --%s (--skip-tls is deprecated: use --%s alone)", flagSkipTLS, other, other)
			}
		}
		if on, _ := fl.GetBool(flagSkipTLS); on && fl.Lookup(image.FlagUseHTTP) != nil {
			if err := fl.Set(image.FlagUseHTTP, "true"); err != nil {
				return exit.Usagef("--%s: %v", flagSkipTLS, err)
			}
		}
	}
	if Debug(cmd) {
		w := f.IO.ErrOut
		fmt.Fprintf(w, "debug: %s (opm %s)\n", cmd.CommandPath(), f.Version().Version)
		fl.VisitAll(func(p *pflag.Flag) {
			if p.Changed {
				fmt.Fprintf(w, "debug:   --%s=%s%s\n", p.Name, p.Value, f.From(p.Name))
			}
		})
	}
	return nil
}

// Debug says whether --debug is on for cmd.
func Debug(cmd *cobra.Command) bool {
	if cmd == nil || cmd.Flags().Lookup(flagDebug) == nil {
		return false
	}
	on, _ := cmd.Flags().GetBool(flagDebug)
	return on
}

// CheckCAFile refuses a --ca-file that cannot be read or holds no
// certificate before the command starts, so that it is one usage error
// rather than a failure per image.
func CheckCAFile(cmd *cobra.Command, f *factory.Factory) error {
	fl := cmd.Flags().Lookup(image.FlagCAFile)
	if fl == nil || fl.Value.String() == "" {
		return nil
	}
	name := fl.Value.String()
	pem, err := os.ReadFile(name)
	if err != nil {
		return exit.Usagef("--%s%s: %w", image.FlagCAFile, f.From(image.FlagCAFile), err)
	}
	if !x509.NewCertPool().AppendCertsFromPEM(pem) {
		return exit.Usagef("--%s %s%s: no PEM certificate in it", image.FlagCAFile, name, f.From(image.FlagCAFile))
	}
	return nil
}
