// Package export is `opm index export`.
package export

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/catalogimages"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/config"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm index export.
type Options struct {
	Index    string
	Packages []string
	Folder   string
	// OldPackages is upstream's hidden, deprecated -o spelling of -p.
	OldPackages   []string
	ContainerTool string
	Output        string
	Image         image.Options
}

// NewCmd is `opm index export`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "export --index DATABASE|IMAGE [--package P1,P2] [--download-folder DIR]",
		Short: "Write an index's packages out as package manifests (appregistry layout)",
		Long: `Write each package of an index as <folder>/<package>/package.yaml and one
directory per bundle version holding its manifests. All packages when
--package is not given. --index is a database file or an index image (only
the layer holding its database is fetched). Bundles the database holds only
by reference (upstream semver modes dropped their manifests) are pulled from
their images, several at once.`,
		Example: `  opm index export --index index.db --package etcd --download-folder out
  opm index export --index quay.io/me/index:3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Index, "index", "i", "", "the sqlite index database file or index image to export")
	fl.StringSliceVarP(&opts.Packages, "package", "p", nil, "comma-separated packages to export (default: all)")
	fl.StringVarP(&opts.Folder, "download-folder", "f", "downloaded", "directory to write the packages into")
	fl.StringSliceVarP(&opts.OldPackages, "xpackage", "o", nil, "old spelling of --package")
	config.Deprecate(fl, "xpackage", "use -p/--package instead")
	fl.StringVarP(&opts.ContainerTool, "container-tool", "c", "none", "accepted for compatibility with upstream opm (none, docker or podman): opm reads the index image itself")
	// -o is upstream's old spelling of --package here: the output format
	// has no short flag.
	output.AddLongFlag(cmd, &opts.Output)
	opts.Image.AddFlags(fl)
	return cmd
}

// Run writes the packages out.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if opts.Index == "" {
		return exit.Usagef("--index is required: the index database or image to export")
	}
	if len(opts.OldPackages) > 0 {
		if len(opts.Packages) > 0 {
			return exit.Usagef("-o (the old spelling of --package) and -p/--package cannot both be given; use -p")
		}
		opts.Packages = opts.OldPackages
	}
	switch opts.ContainerTool {
	case "", "none", "docker", "podman":
	default:
		return exit.Usagef("--container-tool %q: use none, docker or podman", opts.ContainerTool)
	}
	// Bundles to pull are known only as the export runs: a count without
	// a total.
	progress := indexio.StartPull(f, opts.Output, 0, &opts.Image)
	db, done, err := indexio.Source(ctx, f, opts.Index, opts.Image)
	if err != nil {
		return indexio.Interrupted(ctx, err)
	}
	defer done()
	opener := bundlesource.NewOpener(opts.Image, f.ImageClient)
	res, err := db.Export(ctx, opts.Folder, index.ExportOptions{
		Packages: opts.Packages,
		Fetch: func(ctx context.Context, ref string) (*bundle.Bundle, error) {
			// The index names the image: a registry's, never a file or
			// directory of this machine.
			ref, err := catalogimages.RegistryRef(ref)
			if err != nil {
				return nil, err
			}
			ob, err := opener.Open(ctx, ref)
			progress.Step()
			if err != nil {
				return nil, err
			}
			return ob.Bundle, nil
		},
	})
	progress.Finish()
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("export %s: %w", opts.Index, err))
	}
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, exportOutput{Index: opts.Index, Folder: opts.Folder,
			Packages: res.Packages, Bundles: res.Bundles, Fetched: res.Fetched})
	}
	fmt.Fprintf(f.IO.ErrOut, "exported %s, %s (%d pulled) to %s\n", printable.Count(len(res.Packages), "package", "packages"), printable.Count(res.Bundles, "bundle", "bundles"), res.Fetched, opts.Folder)
	return nil
}

// exportOutput is -o json: what was exported from where to where.
type exportOutput struct {
	Index    string   `json:"index"`
	Folder   string   `json:"folder"`
	Packages []string `json:"packages"`
	Bundles  int      `json:"bundles"`
	Fetched  int      `json:"fetched"`
}
