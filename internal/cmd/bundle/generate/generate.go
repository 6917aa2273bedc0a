// Package generate is `opm bundle generate`.
package generate

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm bundle generate.
type Options struct {
	Directory      string
	Package        string
	Channels       []string
	DefaultChannel string
	OutputDir      string
	Overwrite      bool
	Output         string
	// Upstream and BaseImage are set by upstream's path, `opm alpha bundle
	// generate` (see bundle.GenerateOptions).
	Upstream  bool
	BaseImage string
}

// NewCmd is `opm bundle generate`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "generate -d MANIFESTS_DIR",
		Short: "Write metadata/annotations.yaml and bundle.Dockerfile for a bundle",
		Long: `Write the bundle metadata for the manifests in --directory: annotations.yaml in a
metadata/ directory beside the manifests (or in --output-dir, which also gets a
copy of the manifests), and bundle.Dockerfile in the current directory, as
upstream opm does.

Package, channels and default channel not given are taken from an existing
annotations.yaml, then from the CSV name (package: a CSV named
<package>.v<spec.version>, as operator-sdk names them) or the only channel
(default). An existing annotations.yaml that says something else is left alone
and the difference shown, unless --overwrite is given.`,
		Example: `  opm bundle generate -d ./manifests -p my-operator -c stable,fast -e stable
  opm bundle generate -d ./manifests --overwrite`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Directory, "directory", "d", "", "the directory holding the bundle's manifests (required)")
	fl.StringVarP(&opts.Package, "package", "p", "", "the package name (default: from annotations.yaml, or PKG of a CSV named PKG.v<version>)")
	fl.StringSliceVarP(&opts.Channels, "channels", "c", nil, "comma-separated channels the bundle is in")
	fl.StringVarP(&opts.DefaultChannel, "default", "e", "", "the package's default channel (default: the only channel)")
	fl.StringVarP(&opts.OutputDir, "output-dir", "u", "", "bundle directory to write into (default: the parent of --directory)")
	fl.BoolVar(&opts.Overwrite, "overwrite", false, "replace an annotations.yaml that differs")
	output.AddFlag(cmd, &opts.Output)
	return cmd
}

// Run writes the bundle metadata and says what it wrote.
func Run(f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if opts.Directory == "" {
		return exit.Usagef("--directory is required: the directory holding the bundle's manifests")
	}
	res, err := bundle.Generate(bundle.GenerateOptions{
		ManifestsDir:   opts.Directory,
		OutputDir:      opts.OutputDir,
		Package:        opts.Package,
		Channels:       opts.Channels,
		DefaultChannel: opts.DefaultChannel,
		Overwrite:      opts.Overwrite,
		Upstream:       opts.Upstream,
		BaseImage:      opts.BaseImage,
	})
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("generate bundle metadata: %w", err))
	}
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, res)
	}
	w := f.IO.ErrOut
	t := f.IO.ErrTheme()
	for _, n := range res.Notes {
		fmt.Fprintf(w, "%s %s\n", t.NotePrefix(), printable.Text(n))
	}
	if res.CopiedManifests {
		fmt.Fprintf(w, "copied manifests to %s\n", res.BundleDir)
	}
	if res.AnnotationsUnchanged {
		fmt.Fprintf(w, "%s is up to date\n", res.AnnotationsFile)
	} else {
		fmt.Fprintf(w, "wrote %s\n", res.AnnotationsFile)
	}
	fmt.Fprintf(w, "wrote %s\n", res.Dockerfile)
	return nil
}
