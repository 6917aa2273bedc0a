// Package deprecatetruncate is `opm index deprecatetruncate`, and the code
// of `opm registry deprecatetruncate`.
package deprecatetruncate

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm index deprecatetruncate.
type Options struct {
	Bundles             []string
	Database            string
	Output              string
	Permissive          bool
	AllowPackageRemoval bool
	indexflags.ImageOptions
}

// Long is the help shared with opm registry deprecatetruncate.
const Long = `Mark bundles deprecated and truncate the upgrade graph below them, as
upstream opm's hidden deprecatetruncate did. Each bundle is named by its bundle
path (the image reference it was added with). It stays in the index, marked
deprecated, as the tail of its channels: every bundle it replaces or skips,
transitively, is taken out of those channels, and out of the index when no
other channel holds it. A channel the bundle heads is removed.

Given the channel 1.0.0 <- 1.1.0 <- 1.2.0 <- 1.3.0, deprecating 1.2.0 leaves
1.2.0 (deprecated) <- 1.3.0.

Deprecating the head of the default channel (or a bundle whose cut reaches it)
is refused: publish a newer bundle first. With --allow-package-removal, naming
the heads of all the package's channels removes the package instead.

Everything happens in one transaction: on any error nothing is changed. With
--permissive, bundles that are not in the index or cannot be deprecated are
reported and left alone, and the others are deprecated.`

// NewCmd is `opm index deprecatetruncate`; runF, when not nil, runs instead
// of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
	cmd := &cobra.Command{
		Use:   "deprecatetruncate --bundles IMAGE,... (--from-index IMAGE --tag IMAGE | --database FILE)",
		Short: "Deprecate bundles and truncate what they replace, in an index image or database",
		Long: Long + `

With --from-index F --tag T, only F's database layer is fetched, and T is F's
layers with the new database layer, as for index add and rm. --generate writes
database/index.db and index.Dockerfile instead. With --database FILE the file
is changed.`,
		Example: `  opm index deprecatetruncate -b quay.io/me/etcd-bundle:0.9.2 -f quay.io/me/index:3 -t quay.io/me/index:4
  opm index deprecatetruncate --database index.db -b quay.io/me/etcd-bundle:0.9.2`,
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "comma-separated bundle paths (images) to deprecate (required)")
	_ = cmd.MarkFlagRequired("bundles")
	fl.StringVar(&opts.Database, "database", "", "a sqlite index database file to change instead of an image")
	AddFlags(fl, opts)
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	opts.AddFlags(fl)
	return cmd
}

// AddFlags adds the flags shared with opm registry deprecatetruncate.
func AddFlags(fl interface {
	BoolVar(p *bool, name string, value bool, usage string)
}, opts *Options) {
	fl.BoolVar(&opts.Permissive, "permissive", false, "report bundles that are not in the index or cannot be deprecated, and deprecate the others")
	fl.BoolVar(&opts.AllowPackageRemoval, "allow-package-removal", false, "deprecating the heads of all of a package's channels (the default channel's included) removes the package")
}

// Run deprecates the bundles.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	if len(opts.Bundles) == 0 {
		return exit.Usagef("--bundles is required: the bundle images to deprecate")
	}
	change := func(db *index.DB) (*index.DeprecateResult, error) {
		return db.DeprecateTruncate(ctx, opts.Bundles, index.DeprecateOptions{
			Permissive: opts.Permissive, AllowPackageRemoval: opts.AllowPackageRemoval})
	}
	return indexio.Change(ctx, f, &opts.ImageOptions, opts.Database, opts.Output,
		indexio.ChangeWords{Verb: "deprecatetruncate", Purpose: "change"}, change, write)
}

func write(f *factory.Factory, target string, res *index.DeprecateResult) {
	t := f.IO.ErrTheme()
	if res.RemovedPackages != nil {
		// Names come from the index: lines are shown with control
		// characters escaped.
		fmt.Fprintln(f.IO.ErrOut, printable.Name(fmt.Sprintf("removed package %s (%s) from %s: every channel head was deprecated",
			strings.Join(res.RemovedPackages.Packages, ", "), printable.Count(len(res.RemovedPackages.Removed), "bundle", "bundles"), target)))
	}
	for _, d := range res.Deprecated {
		line := fmt.Sprintf("deprecated %s (%s) in %s", d.Bundle.Name, d.Bundle.Path, target)
		var parts []string
		if n := len(d.Truncated); n > 0 {
			parts = append(parts, fmt.Sprintf("removed %s it replaced: %s", printable.Count(n, "bundle", "bundles"), names(d.Truncated)))
		}
		if n := len(d.Kept); n > 0 {
			parts = append(parts, fmt.Sprintf("cut %s from its channels (still in others)", names(d.Kept)))
		}
		if len(d.RemovedChannels) > 0 {
			parts = append(parts, "removed channel(s) it headed: "+strings.Join(d.RemovedChannels, ", "))
		}
		if len(parts) > 0 {
			line += "; " + strings.Join(parts, "; ")
		}
		fmt.Fprintln(f.IO.ErrOut, printable.Name(line))
	}
	if len(res.Deprecated) == 0 && res.RemovedPackages == nil {
		fmt.Fprintf(f.IO.ErrOut, "deprecated nothing in %s\n", printable.Name(target))
	}
	for _, w := range res.Warnings {
		fmt.Fprintf(f.IO.ErrOut, "%s %s\n", t.NotePrefix(), printable.Text(w))
	}
}

func names(bs []index.BundleRef) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = b.Name
	}
	return strings.Join(s, ", ")
}
