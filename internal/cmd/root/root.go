// Package root is the opm command: it registers every command, applies the
// environment and config file to their flags, and maps a run's error to
// its exit status.
package root

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/alpha"
	"github.com/opmkit/opm/internal/cmd/bundle"
	"github.com/opmkit/opm/internal/cmd/completion"
	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/csv"
	catalogdiff "github.com/opmkit/opm/internal/cmd/diff"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/generate"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/index"
	"github.com/opmkit/opm/internal/cmd/initpackage"
	"github.com/opmkit/opm/internal/cmd/migrate"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/cmd/registry"
	"github.com/opmkit/opm/internal/cmd/render"
	"github.com/opmkit/opm/internal/cmd/rootflags"
	"github.com/opmkit/opm/internal/cmd/serve"
	fbcvalidate "github.com/opmkit/opm/internal/cmd/validate"
	"github.com/opmkit/opm/internal/cmd/version"
	"github.com/opmkit/opm/internal/printable"
)

// NewCmd is the opm command tree. A new command is registered here (a
// noun's subcommands in the noun's package).
func NewCmd(f *factory.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "opm",
		Short: "Package Kubernetes operators for OLM",
		Long: `opm validates operator bundles and ClusterServiceVersions, builds the
bundle and index images that the Operator Lifecycle Manager installs from
(sqlite databases, file-based catalogs, or both), converts catalogs between
the two formats, and serves them over OLM's gRPC registry API and OLM v1's
HTTP API. It also compares catalogs (diff), renders, filters and mirrors
them, edits catalog templates and traces upgrade paths (the alpha commands).

Every flag can also be set with an OPM_* environment variable (--fail-on is
OPM_FAIL_ON) or in the config file, as a top-level key named like the flag
(fail-on: warning) or under the command (bundle: {validate: {fail-on: warning}}).
A flag on the command line wins over the environment, which wins over the
config file.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// Without a subcommand, print help; a mistyped one gets suggestions.
		Args: group.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Name() == "help" || cmd.Name() == cobra.ShellCompRequestCmd || cmd.Name() == cobra.ShellCompNoDescRequestCmd {
				return nil
			}
			if err := f.Config.Load(cmd); err != nil {
				return err
			}
			if err := f.Config.CheckUnknown(cmd.Root(), f.Environ()); err != nil {
				return err
			}
			if err := f.Config.Apply(cmd); err != nil {
				return err
			}
			if err := rootflags.Apply(f, cmd); err != nil {
				return err
			}
			if err := rootflags.ApplyTimeout(cmd); err != nil {
				return err
			}
			return rootflags.CheckCAFile(cmd, f)
		},
	}
	rootflags.Add(root)
	root.PersistentFlags().String(config.FlagName, "", "config file (default $XDG_CONFIG_HOME/opm/config.yaml, else ~/.config/opm/config.yaml)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return exit.Usagef("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	root.AddCommand(
		version.NewCmd(f, nil),
		bundle.NewCmd(f),
		csv.NewCmd(f),
		index.NewCmd(f),
		registry.NewCmd(f),
		alpha.NewCmd(f),
		render.NewCmd(f, nil),
		migrate.NewCmd(f, nil),
		fbcvalidate.NewCmd(f, nil),
		serve.NewCmd(f, nil),
		initpackage.NewCmd(f, nil),
		generate.NewCmd(f),
		catalogdiff.NewCmd(f, nil),
	)
	completion.Register(root)
	withUsageOnArgErrors(root)
	return root
}

// withUsageOnArgErrors makes every command's wrong argument count a usage
// error that prints the command's usage line, as cobra would print its
// usage were it not silenced (opm silences it so that a failed run is not
// followed by a page of flags). Groups keep group.NoArgs, which already
// suggests subcommands.
func withUsageOnArgErrors(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		withUsageOnArgErrors(c)
	}
	if cmd.Args == nil || cmd.HasSubCommands() || !cmd.Runnable() {
		return
	}
	check := cmd.Args
	cmd.Args = func(c *cobra.Command, args []string) error {
		err := check(c, args)
		if err == nil {
			return nil
		}
		msg := err.Error()
		// cobra.NoArgs says "unknown command" even of a command that has
		// no subcommands; it is an argument too many.
		if strings.HasPrefix(msg, "unknown command ") && len(args) > 0 {
			msg = fmt.Sprintf("%s takes no arguments, got %q", c.CommandPath(), strings.Join(args, " "))
		}
		msg, _, _ = strings.Cut(msg, "\nRun '")
		return exit.Usagef("%s\nUsage: %s\nRun '%s --help' for more.", msg, c.UseLine(), c.CommandPath())
	}
}

// Run runs opm with args (without the program name) and returns the exit
// status, having printed the error, if any, to f.IO.ErrOut.
func Run(ctx context.Context, f *factory.Factory, args []string) int {
	root := NewCmd(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out) // help and usage go to stdout, as asked for
	root.SetErr(f.IO.ErrOut)
	cmd, err := root.ExecuteContextC(ctx)
	code, print := exit.Code(err)
	var timedOut exit.TimeoutError
	if err != nil && ctx.Err() == nil && cmd != nil && cmd.Context() != nil && errors.As(context.Cause(cmd.Context()), &timedOut) {
		// --timeout stopped the run: say it once, as for a signal.
		msg := timedOut.Error() + "; " + exit.WhatWasWritten(err)
		fmt.Fprintln(f.IO.ErrOut, f.IO.ErrTheme().ErrorPrefix(), msg)
		if output.Of(cmd) == output.JSON {
			_ = output.WriteJSON(f.IO.Out, output.NewErrorObject(errors.New(msg), exit.TimedOut))
		}
		return exit.TimedOut
	}
	if err == nil && ctx.Err() == nil && cmd != nil && cmd.Annotations[rootflags.Server] == "true" && cmd.Context() != nil && errors.As(context.Cause(cmd.Context()), &timedOut) {
		// A server stopped by --timeout stopped gracefully, as on
		// SIGTERM, but the run was cut short: 124, as the README says and
		// as GNU timeout gives (upstream's --timeout-seconds keeps 0).
		fmt.Fprintln(f.IO.ErrOut, f.IO.ErrTheme().ErrorPrefix(), fmt.Sprintf("stopped after %s (--timeout)", timedOut.After))
		return exit.TimedOut
	}
	if err != nil && ctx.Err() != nil {
		// A signal stopped the run: whatever each cancelled request
		// returned, say it once. Commands have rolled back and removed
		// their temporary files before returning.
		code = exit.Interrupted
		var sig exit.Signalled
		if errors.As(context.Cause(ctx), &sig) {
			code = sig.Status()
		}
		msg := "interrupted; " + exit.WhatWasWritten(err)
		fmt.Fprintln(f.IO.ErrOut, f.IO.ErrTheme().ErrorPrefix(), msg)
		if output.Of(cmd) == output.JSON {
			_ = output.WriteJSON(f.IO.Out, output.NewErrorObject(errors.New(msg), code))
		}
		return code
	}
	if err != nil && upstreamPath(cmd) {
		code = exit.UsageOnUpstream(err)
	}
	if print {
		// Errors quote names from catalogs and bundles: their control
		// characters are shown escaped, not sent to the terminal.
		fmt.Fprintln(f.IO.ErrOut, f.IO.ErrTheme().ErrorPrefix(), printable.Error(err))
		// A script reading -o json gets the failure on stdout too, as
		// JSON, rather than nothing to parse.
		if output.Of(cmd) == output.JSON {
			_ = output.WriteJSON(f.IO.Out, output.NewErrorObject(err, code))
		}
	}
	if err != nil && rootflags.Debug(cmd) {
		fmt.Fprintf(f.IO.ErrOut, "debug: exit status %d; causes:\n", code)
		for _, c := range exit.Causes(err) {
			fmt.Fprintf(f.IO.ErrOut, "debug:   %s\n", printable.Text(c))
		}
	}
	return code
}

// upstreamPath says whether cmd is one of the command paths upstream opm
// v1.73.0 had, whose exit statuses scripts test (docs/output.md).
func upstreamPath(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	for c := cmd; c.HasParent(); c = c.Parent() {
		if !c.Parent().HasParent() {
			switch c.Name() {
			case "index", "registry", "alpha":
				return true
			}
		}
	}
	return false
}
