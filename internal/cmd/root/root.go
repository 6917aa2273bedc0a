// Package root is the opm command: it registers every command, applies the
// environment and config file to their flags, and maps a run's error to
// its exit status.
package root

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/bundle"
	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/csv"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/group"
	"github.com/opmkit/opm/internal/cmd/index"
	"github.com/opmkit/opm/internal/cmd/version"
)

// NewCmd is the opm command tree. A new command is registered here (a
// noun's subcommands in the noun's package).
func NewCmd(f *factory.Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "opm",
		Short: "Package Kubernetes operators for OLM",
		Long: `opm validates operator bundles and ClusterServiceVersions, and builds the
bundle and index images that the Operator Lifecycle Manager installs from.

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
			return f.Config.Apply(cmd)
		},
	}
	root.PersistentFlags().String(config.FlagName, "", "config file (default $XDG_CONFIG_HOME/opm/config.yaml, else ~/.config/opm/config.yaml)")
	root.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		return exit.Usagef("%w\nRun '%s --help' for usage.", err, cmd.CommandPath())
	})
	root.AddCommand(
		version.NewCmd(f, nil),
		bundle.NewCmd(f),
		csv.NewCmd(f),
		index.NewCmd(f),
	)
	return root
}

// Run runs opm with args (without the program name) and returns the exit
// status, having printed the error, if any, to f.IO.ErrOut.
func Run(ctx context.Context, f *factory.Factory, args []string) int {
	root := NewCmd(f)
	root.SetArgs(args)
	root.SetIn(f.IO.In)
	root.SetOut(f.IO.Out) // help and usage go to stdout, as asked for
	root.SetErr(f.IO.ErrOut)
	err := root.ExecuteContext(ctx)
	code, print := exit.Code(err)
	if print {
		fmt.Fprintln(f.IO.ErrOut, f.IO.ErrTheme().ErrorPrefix(), err)
	}
	return code
}
