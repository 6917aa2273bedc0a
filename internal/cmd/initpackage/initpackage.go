// Package initpackage is `opm init`: the olm.package blob that starts a
// package's file-based catalog.
package initpackage

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/render"
	"github.com/opmkit/opm/internal/fbc"
)

// Options are the flags and argument of opm init.
type Options struct {
	Package         string
	DefaultChannel  string
	DescriptionFile string
	IconFile        string
	Output          string
}

// NewCmd is `opm init`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "init PACKAGE",
		Short: "Print the olm.package blob that starts a package's file-based catalog",
		Long: `Print the olm.package blob of PACKAGE on stdout, as upstream opm init does:
its default channel, its description (the text of a file, such as the
operator's README.md) and its icon (an image file, embedded as base64 with
its media type, detected from its content: PNG, JPEG, GIF, WebP, BMP, TIFF,
ICO, AVIF, HEIF or SVG).`,
		Example: `  opm init my-operator --default-channel stable --description README.md --icon logo.png > catalog/my-operator/package.json
  opm init my-operator -c stable -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Package = args[0]
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.DefaultChannel, "default-channel", "c", "", "the channel a subscription gets when it names none")
	fl.StringVarP(&opts.DescriptionFile, "description", "d", "", "file holding the package's description (for example the operator's README.md)")
	fl.StringVarP(&opts.IconFile, "icon", "i", "", "image file of the package's icon")
	render.AddFormatFlag(cmd, &opts.Output)
	return cmd
}

// Run prints the blob.
func Run(_ context.Context, f *factory.Factory, opts *Options) error {
	format, err := render.CheckFormat(f, "output", opts.Output)
	if err != nil {
		return err
	}
	if opts.Package == "" {
		return exit.Usagef("the package name is empty: give the name subscriptions use, such as my-operator")
	}
	p := fbc.Package{Schema: fbc.SchemaPackage, Name: opts.Package, DefaultChannel: opts.DefaultChannel}
	if opts.DescriptionFile != "" {
		data, err := os.ReadFile(opts.DescriptionFile)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("--description: %w", err))
		}
		p.Description = string(data)
	}
	if opts.IconFile != "" {
		data, err := os.ReadFile(opts.IconFile)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("--icon: %w", err))
		}
		mt, err := fbc.IconMediaType(data)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("--icon %s: %w", opts.IconFile, err))
		}
		p.Icon = &fbc.Icon{Data: data, MediaType: mt}
	}
	if err := fbc.Write(f.IO.Out, &fbc.Catalog{Packages: []fbc.Package{p}}, format); err != nil {
		return exit.With(exit.Failed, err)
	}
	return nil
}
