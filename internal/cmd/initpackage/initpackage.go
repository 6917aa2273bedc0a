// Package initpackage is `opm init`: the olm.package blob that starts a
// package's file-based catalog.
package initpackage

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/render"
	"github.com/opmkit/opm/internal/fbc"
)

// MaxFileSize bounds the --description and --icon files: far above real
// READMEs and icons, far below what would exhaust memory (the blob holds
// the file, and the icon again as base64).
const MaxFileSize = 4 << 20

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
ICO, AVIF, HEIF or SVG). Each file must be a regular file of at most 4 MiB.`,
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
		data, err := readInput(opts.DescriptionFile)
		if err != nil {
			return exit.With(exit.Failed, fmt.Errorf("--description: %w", err))
		}
		p.Description = string(data)
	}
	if opts.IconFile != "" {
		data, err := readInput(opts.IconFile)
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

// readInput reads the regular file name of at most MaxFileSize bytes. It
// is opened non-blocking, so a named pipe is refused instead of waited on,
// and judged by the open file, so a device such as /dev/zero is refused
// before any of it is read.
func readInput(name string) ([]byte, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	m := st.Mode()
	switch {
	case m&fs.ModeNamedPipe != 0:
		return nil, fmt.Errorf("%s is a named pipe (FIFO), not a regular file: give a file", name)
	case m&fs.ModeDevice != 0:
		return nil, fmt.Errorf("%s is a device, not a regular file: give a file", name)
	case !m.IsRegular():
		return nil, fmt.Errorf("%s is not a regular file: give a file", name)
	case st.Size() > MaxFileSize:
		return nil, fmt.Errorf("%s is %d bytes, larger than the limit of %d (4 MiB)", name, st.Size(), MaxFileSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("%s grew while read, larger than the limit of %d (4 MiB)", name, MaxFileSize)
	}
	return data, nil
}
