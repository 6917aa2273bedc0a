// Package version is `opm version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
)

// Options are the flags of opm version.
type Options struct {
	Output string
}

// NewCmd is `opm version`; runF, when not nil, runs instead of Run (tests).
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print opm's version, commit, build date, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(f, opts)
		},
	}
	output.AddFlag(cmd, &opts.Output)
	return cmd
}

// Run prints the version to stdout: it is what was asked for, and scripts
// read it (`opm version -o json | jq -r .version`).
func Run(f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	info := f.Version()
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, info)
	}
	_, err := fmt.Fprintf(f.IO.Out, "opm %s\n  commit:   %s\n  built:    %s\n  go:       %s\n  platform: %s\n",
		info.Version, info.Commit, info.Date, info.GoVersion, info.Platform)
	return err
}
