package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
)

type bundleGenerateOptions struct {
	Directory      string
	Package        string
	Channels       []string
	DefaultChannel string
	OutputDir      string
	Overwrite      bool
	Output         string
}

func newBundleGenerateCmd(a *app) *cobra.Command {
	opts := &bundleGenerateOptions{}
	cmd := &cobra.Command{
		Use:   "generate -d MANIFESTS_DIR",
		Short: "Write metadata/annotations.yaml and bundle.Dockerfile for a bundle",
		Long: `Write the bundle metadata for the manifests in --directory: annotations.yaml in a
metadata/ directory beside the manifests (or in --output-dir, which also gets a
copy of the manifests), and bundle.Dockerfile in the current directory, as
upstream opm does.

Package, channels and default channel not given are taken from an existing
annotations.yaml, then from the CSV name (package) or the only channel
(default). An existing annotations.yaml that says something else is left alone
and the difference shown, unless --overwrite is given.`,
		Example: `  opm bundle generate -d ./manifests -p my-operator -c stable,fast -e stable
  opm bundle generate -d ./manifests --overwrite`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runBundleGenerate(a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Directory, "directory", "d", "", "the directory holding the bundle's manifests (required)")
	f.StringVarP(&opts.Package, "package", "p", "", "the package name (default: from annotations.yaml or the CSV name)")
	f.StringSliceVarP(&opts.Channels, "channels", "c", nil, "comma-separated channels the bundle is in")
	f.StringVarP(&opts.DefaultChannel, "default", "e", "", "the package's default channel (default: the only channel)")
	f.StringVarP(&opts.OutputDir, "output-dir", "u", "", "bundle directory to write into (default: the parent of --directory)")
	f.BoolVar(&opts.Overwrite, "overwrite", false, "replace an annotations.yaml that differs")
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runBundleGenerate(a *app, opts *bundleGenerateOptions) error {
	if err := a.checkOutput(opts.Output); err != nil {
		return err
	}
	if opts.Directory == "" {
		return usageErrorf("--directory is required: the directory holding the bundle's manifests")
	}
	res, err := bundle.Generate(bundle.GenerateOptions{
		ManifestsDir:   opts.Directory,
		OutputDir:      opts.OutputDir,
		Package:        opts.Package,
		Channels:       opts.Channels,
		DefaultChannel: opts.DefaultChannel,
		Overwrite:      opts.Overwrite,
	})
	if err != nil {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("generate bundle metadata: %w", err)}
	}
	if opts.Output == "json" {
		return writeJSON(a.streams.Out, res)
	}
	t := newTheme(a.streams.ErrOut, a.streams.ErrTTY)
	for _, n := range res.Notes {
		fmt.Fprintf(a.streams.ErrOut, "%s %s\n", t.notePrefix(), n)
	}
	if res.CopiedManifests {
		fmt.Fprintf(a.streams.ErrOut, "copied manifests to %s\n", res.BundleDir)
	}
	if res.AnnotationsUnchanged {
		fmt.Fprintf(a.streams.ErrOut, "%s is up to date\n", res.AnnotationsFile)
	} else {
		fmt.Fprintf(a.streams.ErrOut, "wrote %s\n", res.AnnotationsFile)
	}
	fmt.Fprintf(a.streams.ErrOut, "wrote %s\n", res.Dockerfile)
	return nil
}
