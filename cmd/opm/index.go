package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
)

func newIndexCmd(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Build and read sqlite index databases and images",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newIndexAddCmd(a), newIndexRmCmd(a), newIndexInspectCmd(a), newIndexExportCmd(a))
	return cmd
}

type indexAddOptions struct {
	Bundles         []string
	Database        string
	Mode            string
	Permissive      bool
	OverwriteLatest bool
	Output          string
	Image           image.Options
}

func newIndexAddCmd(a *app) *cobra.Command {
	opts := &indexAddOptions{}
	cmd := &cobra.Command{
		Use:   "add --bundles B1,B2 --database FILE",
		Short: "Add bundles to an index",
		Long: `Add bundles to a sqlite index database, all in one transaction: either every
bundle is added or the database is left exactly as it was (with --permissive,
bundles that cannot be added are skipped and reported, and the rest added).

--bundles entries are bundle directories or bundle image references
(a registry name, oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE).
With --database FILE the database file is created when missing.

Modes: replaces (the default) builds channels from each CSV's replaces and
skips; semver chains the bundles of each channel by version; semver-skippatch
also lets a bundle replace every lower patch of its major.minor.

Exit status: 0 added, 1 error, 2 a bundle image is already in the index,
3 the package and CSV are already in the index (as upstream opm).`,
		Example: `  opm index add --database index.db --bundles ./bundle/1.0.0,./bundle/1.1.0
  opm index add --database index.db --bundles quay.io/me/op-bundle:v1.2.0 --mode semver`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexAdd(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "comma-separated bundle directories or image references to add")
	f.StringVar(&opts.Database, "database", "", "the sqlite index database to add to (created when missing)")
	f.StringVar(&opts.Mode, "mode", "replaces", "graph update mode: replaces, semver or semver-skippatch")
	f.BoolVar(&opts.Permissive, "permissive", false, "skip bundles that cannot be added, report them, and add the rest")
	f.BoolVar(&opts.OverwriteLatest, "overwrite-latest", false, "replace a channel head's bundle by a rebuilt one of the same CSV name")
	addOutputFlag(cmd, &opts.Output)
	opts.Image.AddFlags(f)
	return cmd
}

func runIndexAdd(ctx context.Context, a *app, opts *indexAddOptions) error {
	if err := a.checkOutput(opts.Output); err != nil {
		return err
	}
	mode, err := index.ParseMode(opts.Mode)
	if err != nil {
		return usageErrorf("--mode: %v", err)
	}
	if len(opts.Bundles) == 0 {
		return usageErrorf("--bundles is required: the bundle directories or images to add")
	}
	if opts.Database == "" {
		return usageErrorf("--database is required: adding to an index image (--from-index/--tag) is not available yet in this build")
	}
	for _, b := range opts.Bundles {
		if err := checkArg(b); err != nil {
			return &ExitError{Code: exitUsage, Err: err}
		}
	}

	opener := &bundleOpener{imageOpts: opts.Image}
	loaded, err := loadBundles(ctx, opener, opts.Bundles)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}

	db, created, err := openOrCreate(opts.Database)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	res, addErr := db.Add(ctx, loaded, index.AddOptions{Mode: mode, Permissive: opts.Permissive, OverwriteLatest: opts.OverwriteLatest})
	closeErr := db.Close()
	if addErr == nil {
		addErr = closeErr
	}
	if addErr != nil {
		if created {
			// A run that added nothing leaves no new file behind.
			_ = os.Remove(opts.Database)
		}
		return &ExitError{Code: index.ExitCode(addErr), Err: fmt.Errorf("add to %s: %w", opts.Database, addErr)}
	}
	if opts.Output == outputJSON {
		return writeJSON(a.streams.Out, res)
	}
	writeAddResult(a, opts.Database, res)
	return nil
}

// loadBundles opens every bundle, several at once, and fails with every
// problem found when any bundle cannot be read whole.
func loadBundles(ctx context.Context, opener *bundleOpener, args []string) ([]index.LoadedBundle, error) {
	out := make([]index.LoadedBundle, len(args))
	errs := make([]error, len(args))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)+2)
	var wg sync.WaitGroup
	for i, arg := range args {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			ob, err := opener.Open(ctx, arg)
			if err != nil {
				errs[i] = fmt.Errorf("load bundle %s: %w", arg, err)
				return
			}
			out[i] = index.LoadedBundle{Bundle: ob.Bundle, BundlePath: arg, Local: ob.Local}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w\nnothing was added; `opm bundle validate` shows every problem with its fix", err)
	}
	return out, nil
}

func openOrCreate(path string) (*index.DB, bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		db, err := index.Create(path)
		return db, true, err
	}
	db, err := index.Open(path)
	return db, false, err
}

func writeAddResult(a *app, db string, res *index.AddResult) {
	w := a.streams.ErrOut
	t := newTheme(w, a.streams.ErrTTY)
	fmt.Fprintf(w, "added %d bundle(s) to %s\n", len(res.Added), db)
	for _, b := range res.Overwritten {
		fmt.Fprintf(w, "  replaced %s (%s)\n", b.Name, b.Package)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(w, "  %s skipped %s: %s\n", t.errorPrefix(), s.Bundle.Name, s.Message)
	}
	for _, p := range res.Packages {
		fmt.Fprintf(w, "  %s (default channel %s)\n", p.Name, p.DefaultChannel)
		for _, c := range p.Channels {
			fmt.Fprintf(w, "    %s → %s\n", c.Name, c.Head)
		}
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "%s %s\n", t.notePrefix(), warn)
	}
}

type indexRmOptions struct {
	Operators []string
	Database  string
	Output    string
}

func newIndexRmCmd(a *app) *cobra.Command {
	opts := &indexRmOptions{}
	cmd := &cobra.Command{
		Use:   "rm --operators A,B --database FILE",
		Short: "Remove packages from an index",
		Long: `Remove packages, with their channels and bundles, from a sqlite index database in
one transaction. APIs another package still provides or requires stay.`,
		Example: `  opm index rm --database index.db --operators etcd,prometheus`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexRm(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Operators, "operators", "o", nil, "comma-separated package names to remove")
	f.StringVar(&opts.Database, "database", "", "the sqlite index database to remove from")
	// -o is --operators here, as upstream; the output format has no short flag.
	f.StringVar(&opts.Output, "output", outputText, "output format: text or json (json goes to stdout)")
	return cmd
}

func runIndexRm(ctx context.Context, a *app, opts *indexRmOptions) error {
	if err := a.checkOutput(opts.Output); err != nil {
		return err
	}
	if len(opts.Operators) == 0 {
		return usageErrorf("--operators is required: the package names to remove")
	}
	if opts.Database == "" {
		return usageErrorf("--database is required: removing from an index image (--from-index/--tag) is not available yet in this build")
	}
	db, err := index.Open(opts.Database)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	res, err := db.RemovePackages(ctx, opts.Operators)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("remove from %s: %w", opts.Database, err)}
	}
	if opts.Output == outputJSON {
		return writeJSON(a.streams.Out, res)
	}
	fmt.Fprintf(a.streams.ErrOut, "removed %s (%d bundles) from %s\n", strings.Join(res.Packages, ", "), len(res.Removed), opts.Database)
	return nil
}

type indexInspectOptions struct {
	Index  string
	Output string
}

func newIndexInspectCmd(a *app) *cobra.Command {
	opts := &indexInspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect DATABASE",
		Short: "Show an index's packages, channels and upgrade graph",
		Example: `  opm index inspect index.db
  opm index inspect index.db -o json | jq '.packages[].name'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Index = args[0]
			return runIndexInspect(cmd.Context(), a, opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	return cmd
}

func runIndexInspect(ctx context.Context, a *app, opts *indexInspectOptions) error {
	if err := a.checkOutput(opts.Output); err != nil {
		return err
	}
	db, err := index.OpenReadOnly(opts.Index)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	defer db.Close()
	idx, err := db.Inspect(ctx)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	if opts.Output == outputJSON {
		return writeJSON(a.streams.Out, idx)
	}
	writeIndexTree(a.streams.Out, idx)
	return nil
}

// writeIndexTree prints package → channel → entries, each entry with what
// it replaces and skips.
func writeIndexTree(w io.Writer, idx *index.Index) {
	for _, p := range idx.Packages {
		fmt.Fprintf(w, "%s (default channel %s)\n", p.Name, p.DefaultChannel)
		versions := map[string]string{}
		for _, b := range p.Bundles {
			versions[b.Name] = b.Version
		}
		for ci, c := range p.Channels {
			last := ci == len(p.Channels)-1
			branch, indent := "├── ", "│   "
			if last {
				branch, indent = "└── ", "    "
			}
			fmt.Fprintf(w, "%s%s (head %s)\n", branch, c.Name, c.Head)
			edges := map[string][]string{}
			for _, e := range c.Edges {
				edges[e.From] = append(edges[e.From], e.To)
			}
			for bi, b := range c.Bundles {
				leaf := "├── "
				if bi == len(c.Bundles)-1 {
					leaf = "└── "
				}
				line := b
				if v := versions[b]; v != "" {
					line += " " + v
				}
				if to := edges[b]; len(to) > 0 {
					line += " → " + strings.Join(to, ", ")
				}
				fmt.Fprintf(w, "%s%s%s\n", indent, leaf, line)
			}
		}
	}
}

type indexExportOptions struct {
	Index    string
	Packages []string
	Folder   string
	Image    image.Options
}

func newIndexExportCmd(a *app) *cobra.Command {
	opts := &indexExportOptions{}
	cmd := &cobra.Command{
		Use:   "export --index DATABASE [--package P1,P2] [--download-folder DIR]",
		Short: "Write an index's packages out as package manifests (appregistry layout)",
		Long: `Write each package of an index as <folder>/<package>/package.yaml and one
directory per bundle version holding its manifests. All packages when
--package is not given. Bundles the database holds only by reference (upstream
semver modes dropped their manifests) are pulled from their images.`,
		Example: `  opm index export --index index.db --package etcd --download-folder out`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexExport(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Index, "index", "i", "", "the sqlite index database to export")
	f.StringSliceVarP(&opts.Packages, "package", "p", nil, "comma-separated packages to export (default: all)")
	f.StringVarP(&opts.Folder, "download-folder", "f", "downloaded", "directory to write the packages into")
	opts.Image.AddFlags(f)
	return cmd
}

func runIndexExport(ctx context.Context, a *app, opts *indexExportOptions) error {
	if opts.Index == "" {
		return usageErrorf("--index is required: the index database to export")
	}
	db, err := index.OpenReadOnly(opts.Index)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	defer db.Close()
	opener := &bundleOpener{imageOpts: opts.Image}
	res, err := db.Export(ctx, opts.Folder, index.ExportOptions{
		Packages: opts.Packages,
		Fetch: func(ctx context.Context, ref string) (*bundle.Bundle, error) {
			ob, err := opener.Open(ctx, ref)
			if err != nil {
				return nil, err
			}
			return ob.Bundle, nil
		},
	})
	if err != nil {
		return &ExitError{Code: exitFailed, Err: fmt.Errorf("export %s: %w", opts.Index, err)}
	}
	fmt.Fprintf(a.streams.ErrOut, "exported %d package(s), %d bundle(s) (%d pulled) to %s\n", len(res.Packages), res.Bundles, res.Fetched, opts.Folder)
	return nil
}
