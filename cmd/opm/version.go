package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/version"
)

type versionOptions struct {
	Output string
}

func newVersionCmd(a *app) *cobra.Command {
	opts := &versionOptions{}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print opm's version, commit, build date, Go version and platform",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := a.checkOutput(opts.Output); err != nil {
				return err
			}
			return runVersion(a, opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

// runVersion prints the version to stdout: it is what was asked for, and
// scripts read it (`opm version -o json | jq -r .version`).
func runVersion(a *app, opts *versionOptions) error {
	info := version.Get()
	if opts.Output == outputJSON {
		return writeJSON(a.streams.Out, info)
	}
	_, err := fmt.Fprintf(a.streams.Out, "opm %s\n  commit:   %s\n  built:    %s\n  go:       %s\n  platform: %s\n",
		info.Version, info.Commit, info.Date, info.GoVersion, info.Platform)
	return err
}
