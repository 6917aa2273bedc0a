// Package unpack is `opm alpha bundle unpack`: copy a bundle image's
// content into a directory, as upstream opm did.
package unpack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/lintflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/validate"
)

// Options are the flags of opm alpha bundle unpack.
type Options struct {
	Image          string
	Out            string
	SkipValidation bool
	Debug          bool
	SkipTLS        bool
	ImageOpts      image.Options
}

// NewCmd is `opm alpha bundle unpack`; runF, when not nil, runs instead of
// Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "unpack BUNDLE_IMAGE [-o DIR] [-v]",
		Short: "Copy a bundle image's content into a directory",
		Long: `Read a bundle image (a registry reference, oci:DIR[:TAG], oci-archive:FILE or
docker-archive:FILE) and copy its files into --out, as upstream opm did. The
bundle is validated first with opm's rules (failing findings: exit 1, nothing
written) unless --skip-validation. Files are written beside each other in a
temporary directory inside --out and moved into place only once every one is
read, so an interrupted or failed unpack leaves --out as it was.`,
		Example: `  opm alpha bundle unpack quay.io/me/etcd-bundle:v1 -o ./etcd`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Image = args[0]
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Out, "out", "o", "./", "directory to unpack into")
	fl.BoolVarP(&opts.SkipValidation, "skip-validation", "v", false, "do not validate the bundle first")
	// The shared image flags, as on every command that pulls: among them
	// --signature-policy, without which the pull would be checked against
	// the default policy whatever the command line said.
	opts.ImageOpts.AddFlags(fl)
	fl.StringVarP(&opts.ImageOpts.CAFile, "root-ca", "c", "", "PEM file of a root CA for registries (as --ca-file)")
	fl.BoolVarP(&opts.SkipTLS, "skip-tls", "s", false, "use plain HTTP for registries")
	config.Deprecate(fl, "skip-tls", "use --use-http (or --skip-tls-verify) instead")
	fl.BoolVarP(&opts.Debug, "debug", "d", false, "print more detail on stderr")
	return cmd
}

// Run unpacks the image.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if opts.SkipTLS {
		opts.ImageOpts.UseHTTP = true // what upstream made of it
	}
	if err := opts.ImageOpts.Validate(); err != nil {
		return exit.Usagef("%v", err)
	}
	ref, err := image.ParseReference(opts.Image)
	if err != nil {
		return exit.Usagef("%s: %v", opts.Image, err)
	}
	c, err := f.ImageClient(opts.ImageOpts)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return exit.With(exit.Failed, fmt.Errorf("--out: %w", err))
	}
	tmp, err := os.MkdirTemp(opts.Out, ".opm-unpack-")
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("--out: %w", err))
	}
	defer os.RemoveAll(tmp)

	files, _, err := c.OpenFS(ctx, ref)
	if err != nil {
		return failed(ctx, fmt.Errorf("unpack %s: %w", opts.Image, err))
	}
	defer func() { _ = files.Close() }()
	var written []string
	err = fs.WalkDir(files, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		dst := filepath.Join(tmp, filepath.FromSlash(p))
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			written = append(written, p)
			return copyFile(files, p, dst)
		}
		return nil // links and special files are not bundle content
	})
	if err != nil {
		return failed(ctx, fmt.Errorf("unpack %s: %w", opts.Image, err))
	}

	if !opts.SkipValidation {
		in, err := bundlesource.DirInput(tmp)
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		in.Path = opts.Image
		res := validate.Run(ctx, []validate.Input{in}, validate.Options{FailOn: validate.Error})
		if ctx.Err() != nil {
			return exit.Interrupt()
		}
		if !res.Passed {
			l := lintflags.Flags{Output: output.Text, FailOn: "error"}
			if err := l.Render(f, res, validate.Error, "bundle"); err != nil && !errors.Is(err, exit.Findings) {
				return err
			}
			return exit.With(exit.Failed, fmt.Errorf("%s is not a valid bundle: nothing was unpacked into %s (--skip-validation unpacks it anyway)", opts.Image, opts.Out))
		}
	}

	// Everything is read: move it into place.
	for _, p := range written {
		dst := filepath.Join(opts.Out, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return exit.With(exit.Failed, err)
		}
		if err := os.Rename(filepath.Join(tmp, filepath.FromSlash(p)), dst); err != nil {
			return exit.With(exit.Failed, fmt.Errorf("unpack %s: %w", opts.Image, err))
		}
	}
	fmt.Fprintf(f.IO.ErrOut, "unpacked %s: %d file(s) into %s\n", opts.Image, len(written), opts.Out)
	return nil
}

func failed(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return exit.Interrupt()
	}
	return exit.With(exit.Failed, err)
}

func copyFile(src fs.FS, name, dst string) error {
	in, err := src.Open(name)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
