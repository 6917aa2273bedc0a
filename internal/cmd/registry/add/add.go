// Package add is `opm registry add`: upstream opm's spelling of
// `opm index add --database`.
package add

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	indexadd "github.com/opmkit/opm/internal/cmd/index/add"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/index"
)

// DefaultDatabase is upstream's -d default on the registry commands.
const DefaultDatabase = "bundles.db"

// NewCmd is `opm registry add`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*indexadd.Options) error) *cobra.Command {
	opts := &indexadd.Options{}
	var debug bool
	cmd := &cobra.Command{
		Use:   "add -b B1,B2 [-d DATABASE]",
		Short: "Add bundles to a database file (opm index add --database)",
		Long: `Add bundle images (or bundle directories) to a sqlite database file, created
when missing, in one transaction: every bundle is added or nothing is
written (with --permissive, bundles that cannot be loaded or added are
skipped with the reason, and the rest added). This is 'opm index add
--database' with upstream opm's flag names and short letters.

Exit status, as upstream: 0 added, 1 error, 2 a bundle image is already in
the database, 3 the package and CSV are already in it, 64 a usage error.`,
		Example: `  opm registry add -d index.db -b quay.io/me/op-bundle:v1.2.0
  opm registry add -b 127.0.0.1:5000/op-bundle:v1 --use-http --mode semver`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if opts.Image.CAFile != "" && (opts.Image.SkipTLSVerify || (opts.PullTool != "" && opts.PullTool != "none")) {
				return exit.Usagef("--ca-file works only without --skip-tls-verify and without a container tool (-c none)")
			}
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&opts.Database, "database", "d", DefaultDatabase, "database file to add to (created when missing)")
	fl.StringSliceVarP(&opts.Bundles, "bundle-images", "b", nil, "comma-separated bundle image references (or bundle directories) to add")
	fl.BoolVar(&opts.Permissive, "permissive", false, "skip bundles that cannot be loaded or added, with the reason, and add the rest")
	fl.StringVar(&opts.Mode, "mode", "replaces", "graph update mode: replaces, semver or semver-skippatch")
	fl.StringVarP(&opts.PullTool, "container-tool", "c", "none", "none, docker or podman to pull bundle images with (none: opm pulls them itself)")
	fl.BoolVar(&opts.OverwriteLatest, "overwrite-latest", false, "replace a channel head's bundle by a rebuilt one of the same CSV name")
	_ = fl.MarkHidden("overwrite-latest")
	fl.BoolVar(&opts.EnableAlpha, "enable-alpha", false, "accepted for compatibility with upstream opm; opm has no alpha index features")
	_ = fl.MarkHidden("enable-alpha")
	fl.BoolVar(&debug, "debug", false, "print more detail on stderr")
	fl.StringVar(&opts.Output, "output", output.Text, "output format: text or json (json goes to stdout)")
	opts.Image.AddFlags(fl)
	return cmd
}

// Run adds the bundles, as opm index add --database does. Without bundles,
// it only makes sure the database exists, as upstream did.
func Run(ctx context.Context, f *factory.Factory, opts *indexadd.Options) error {
	if len(opts.Bundles) == 0 {
		if _, err := index.ParseMode(opts.Mode); err != nil {
			return exit.Usagef("--mode: %v", err)
		}
		if err := opts.Image.Validate(); err != nil {
			return exit.Usagef("%v", err)
		}
		if _, err := os.Stat(opts.Database); errors.Is(err, os.ErrNotExist) {
			db, err := index.Create(opts.Database)
			if err != nil {
				return exit.With(exit.Failed, err)
			}
			if err := db.Close(); err != nil {
				return exit.With(exit.Failed, err)
			}
			fmt.Fprintf(f.IO.ErrOut, "created %s (no bundles given)\n", opts.Database)
		}
		return nil
	}
	return indexadd.Run(ctx, f, opts)
}
