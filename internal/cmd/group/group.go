// Package group makes the commands that only hold subcommands (opm bundle,
// opm index): without a subcommand they print help; a mistyped one is a
// usage error with cobra's "did you mean" suggestions.
package group

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
)

// New is a command that holds subs.
func New(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(subs...)
	return cmd
}

// NoArgs refuses arguments to a command that takes none but subcommands,
// suggesting the subcommands near a mistyped one. (cobra.NoArgs says
// "unknown command" without suggestions; cobra only suggests for commands
// that set no Args at all.)
func NoArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if cmd.SuggestionsMinimumDistance <= 0 {
		// cobra sets its default only on its own path, not in SuggestionsFor.
		cmd.SuggestionsMinimumDistance = 2
	}
	if s := cmd.SuggestionsFor(args[0]); !cmd.DisableSuggestions && len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return exit.Usagef("%s\nRun '%s --help' for usage.", msg, cmd.CommandPath())
}

// Refused is a hidden command opm does not provide, which upstream opm
// had: run with any flags, it is a usage error that says why, rather than
// "unknown command".
func Refused(name, why string) *cobra.Command {
	return &cobra.Command{
		Use:                name,
		Short:              "Not provided by opm",
		Hidden:             true,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return exit.Usagef("%s is not provided by opm: %s", cmd.CommandPath(), why)
		},
	}
}
