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
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indeximage"
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
	indexImageOptions
}

// indexImageOptions are the flags index add and index rm share for index
// images, as upstream opm had them.
type indexImageOptions struct {
	FromIndex     string
	Tag           string
	BinaryImage   string
	Generate      bool
	OutDockerfile string
	ContainerTool string
	BuildTool     string
	PullTool      string
	EnableAlpha   bool
	Image         image.Options
}

func (o *indexImageOptions) addFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.FromIndex, "from-index", "f", "", "index image to start from (only its database layer is fetched)")
	f.StringVarP(&o.Tag, "tag", "t", "", "where to write the index image: a registry reference, oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:NAME]")
	f.StringVarP(&o.BinaryImage, "binary-image", "i", indeximage.DefaultBinaryImage, "base image of a new index (its opm serves the database); also the FROM of --generate's Dockerfile")
	f.BoolVar(&o.Generate, "generate", false, "write database/index.db and the Dockerfile in the working directory instead of an image")
	f.StringVarP(&o.OutDockerfile, "out-dockerfile", "d", indeximage.DefaultDockerfile, "name of the Dockerfile --generate writes")
	f.StringVarP(&o.ContainerTool, "container-tool", "c", "", "docker or podman for both --pull-tool and --build-tool (default: none, opm works without a container tool)")
	f.StringVarP(&o.BuildTool, "build-tool", "u", "", "build the image with docker or podman from a generated Dockerfile instead of writing it directly")
	f.StringVarP(&o.PullTool, "pull-tool", "p", "", "pull bundle images with docker or podman (their local storage and configuration) instead of directly; none is the default")
	f.BoolVar(&o.EnableAlpha, "enable-alpha", false, "accepted for compatibility with upstream opm; opm has no alpha index features")
	o.Image.AddFlags(f)
}

// tools resolves -c, -u and -p: "" means opm's own code.
func (o *indexImageOptions) tools() (build, pull containertools.Tool, err error) {
	parse := func(flag, v string) (containertools.Tool, error) {
		switch v {
		case "", "none":
			return "", nil
		case "docker", "podman":
			return containertools.Tool(v), nil
		}
		return "", usageErrorf("--%s %q: use docker or podman (or none)", flag, v)
	}
	c, err := parse("container-tool", o.ContainerTool)
	if err != nil {
		return "", "", err
	}
	if build, err = parse("build-tool", o.BuildTool); err != nil {
		return "", "", err
	}
	if pull, err = parse("pull-tool", o.PullTool); err != nil {
		return "", "", err
	}
	if build == "" && o.BuildTool == "" {
		build = c
	}
	if pull == "" && o.PullTool == "" {
		pull = c
	}
	return build, pull, nil
}

// imageMode says whether the options ask for an index image (or its
// generated files) rather than a database file.
func (o *indexImageOptions) imageMode() bool {
	return o.FromIndex != "" || o.Tag != "" || o.Generate || o.BuildTool != "" || o.ContainerTool != ""
}

// check validates the image options before anything is read.
func (o *indexImageOptions) check(database string) (build, pull containertools.Tool, err error) {
	build, pull, err = o.tools()
	if err != nil {
		return "", "", err
	}
	if database != "" {
		if o.imageMode() {
			return "", "", usageErrorf("--database works on a database file; drop --from-index, --tag, --generate and the tool flags, or drop --database")
		}
		return build, pull, nil
	}
	switch {
	case o.Generate:
		if o.Tag != "" && build == "" {
			return "", "", usageErrorf("--generate writes files and builds no image; drop --tag, or add --build-tool to build one")
		}
	case o.Tag == "":
		return "", "", usageErrorf("--tag is required: where to write the index image (or use --generate, or --database FILE)")
	}
	if o.Tag != "" && build == "" {
		if _, err := image.ParseReference(o.Tag); err != nil {
			return "", "", usageErrorf("--tag: %v", err)
		}
	}
	for flag, v := range map[string]string{"from-index": o.FromIndex, "binary-image": o.BinaryImage} {
		if v == "" {
			continue
		}
		if _, err := image.ParseReference(v); err != nil {
			return "", "", usageErrorf("--%s: %v", flag, err)
		}
	}
	return build, pull, nil
}

func newIndexAddCmd(a *app) *cobra.Command {
	opts := &indexAddOptions{}
	cmd := &cobra.Command{
		Use:   "add --bundles B1,B2 (--tag IMAGE [--from-index IMAGE] | --generate | --database FILE)",
		Short: "Add bundles to an index image or database",
		Long: `Add bundles to a sqlite index, all in one transaction: either every bundle
is added or nothing is written (with --permissive, bundles that cannot be
added are skipped and reported, and the rest added).

--bundles entries are bundle directories or bundle image references
(a registry name, oci:DIR[:TAG], oci-archive:FILE, docker-archive:FILE).

Index images (no container tool needed): with --from-index F, opm reads F's
manifest and config, fetches only the layer holding the database (label
operators.operatorframework.io.index.database.v1), adds the bundles, and
writes to --tag an image made of F's layers plus one new layer holding the
database. When F's top layer holds nothing but the database (as every layer
opm writes does), it is replaced rather than stacked upon, so the image
never carries two databases. F's other layers are never downloaded: they are
mounted or skipped when F and --tag are on the same registry. A multi-arch F
gives a multi-arch result, every platform with the same database layer.
Without --from-index, the base is --binary-image (default
` + indeximage.DefaultBinaryImage + `, the last upstream
opm release that serves sqlite), with entrypoint /bin/opm, command
"registry serve --database /database/index.db" and port 50051.
Nothing is written unless every bundle loads (or --permissive).

--generate writes database/index.db and index.Dockerfile (--out-dockerfile)
in the working directory instead. --build-tool docker|podman generates them
in a temporary directory and builds --tag with that tool.
With --database FILE the database file is changed (created when missing).

Modes: replaces (the default) builds channels from each CSV's replaces and
skips; semver chains the bundles of each channel by version; semver-skippatch
also lets a bundle replace every lower patch of its major.minor.

Exit status: 0 added, 1 error, 2 a bundle image is already in the index,
3 the package and CSV are already in the index (as upstream opm).`,
		Example: `  opm index add --bundles quay.io/me/op-bundle:v1.2.0 --from-index quay.io/me/index:1 --tag quay.io/me/index:2
  opm index add --bundles quay.io/me/op-bundle:v1.0.0 --tag oci:./index:1
  opm index add --bundles ./bundle/1.0.0 --generate
  opm index add --database index.db --bundles ./bundle/1.0.0,./bundle/1.1.0 --mode semver`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexAdd(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "comma-separated bundle directories or image references to add")
	f.StringVar(&opts.Database, "database", "", "a sqlite index database file to add to (created when missing) instead of an image")
	f.StringVar(&opts.Mode, "mode", "replaces", "graph update mode: replaces, semver or semver-skippatch")
	f.BoolVar(&opts.Permissive, "permissive", false, "skip bundles that cannot be added, report them, and add the rest")
	f.BoolVar(&opts.OverwriteLatest, "overwrite-latest", false, "replace a channel head's bundle by a rebuilt one of the same CSV name")
	addOutputFlag(cmd, &opts.Output)
	opts.addFlags(f)
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
	if opts.Database == "" && !opts.imageMode() {
		return usageErrorf("say where to add: --tag IMAGE (with --from-index IMAGE to extend one), --generate, or --database FILE")
	}
	_, pullTool, err := opts.check(opts.Database)
	if err != nil {
		return err
	}
	for _, b := range opts.Bundles {
		if err := checkArg(b); err != nil {
			return &ExitError{Code: exitUsage, Err: err}
		}
	}

	opener := &bundleOpener{imageOpts: opts.Image}
	pulled, cleanup, err := pullWithTool(ctx, a, pullTool, opts.Bundles, opts.Image)
	defer cleanup()
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	loaded, err := loadBundles(ctx, opener, opts.Bundles, pulled)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	addOpts := index.AddOptions{Mode: mode, Permissive: opts.Permissive, OverwriteLatest: opts.OverwriteLatest}

	if opts.Database == "" {
		return changeIndexImage(ctx, a, &opts.indexImageOptions, opts.Output,
			func(db *index.DB) (*index.AddResult, error) { return db.Add(ctx, loaded, addOpts) }, writeAddResult)
	}

	db, created, err := openOrCreate(opts.Database)
	if err != nil {
		return &ExitError{Code: exitFailed, Err: err}
	}
	res, addErr := db.Add(ctx, loaded, addOpts)
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
// problem found when any bundle cannot be read whole. open, when it has an
// entry for an argument, names where to read that bundle from instead (an
// archive a pull tool saved); the index still records the argument.
func loadBundles(ctx context.Context, opener *bundleOpener, args []string, open map[string]string) ([]index.LoadedBundle, error) {
	out := make([]index.LoadedBundle, len(args))
	errs := make([]error, len(args))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)+2)
	var wg sync.WaitGroup
	for i, arg := range args {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			from := arg
			if o, ok := open[arg]; ok {
				from = o
			}
			ob, err := opener.Open(ctx, from)
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
	Operators  []string
	Database   string
	Output     string
	Permissive bool
	indexImageOptions
}

func newIndexRmCmd(a *app) *cobra.Command {
	opts := &indexRmOptions{}
	cmd := &cobra.Command{
		Use:   "rm --operators A,B (--from-index IMAGE --tag IMAGE | --database FILE)",
		Short: "Remove packages from an index image or database",
		Long: `Remove packages, with their channels and bundles, from a sqlite index in one
transaction. APIs another package still provides or requires stay.

With --from-index F --tag T, only F's database layer is fetched, and T is F's
layers with the new database layer on top (replacing F's database layer when
it holds nothing but the database), as for index add. --generate writes
database/index.db and index.Dockerfile instead; --build-tool builds T with
docker or podman. With --database FILE the file is changed.`,
		Example: `  opm index rm --operators etcd --from-index quay.io/me/index:2 --tag quay.io/me/index:3
  opm index rm --database index.db --operators etcd,prometheus`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIndexRm(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Operators, "operators", "o", nil, "comma-separated package names to remove")
	f.StringVar(&opts.Database, "database", "", "a sqlite index database file to remove from instead of an image")
	f.BoolVar(&opts.Permissive, "permissive", false, "accepted for compatibility with upstream opm (a removal has nothing to skip)")
	// -o is --operators here, as upstream; the output format has no short flag.
	f.StringVar(&opts.Output, "output", outputText, "output format: text or json (json goes to stdout)")
	opts.addFlags(f)
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
		if opts.FromIndex == "" {
			return usageErrorf("--from-index is required: the index image to remove from (or --database FILE)")
		}
		if _, _, err := opts.check(""); err != nil {
			return err
		}
		return changeIndexImage(ctx, a, &opts.indexImageOptions, opts.Output,
			func(db *index.DB) (*index.RemoveResult, error) { return db.RemovePackages(ctx, opts.Operators) }, writeRemoveResult)
	}
	if _, _, err := opts.check(opts.Database); err != nil {
		return err
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
	writeRemoveResult(a, opts.Database, res)
	return nil
}

func writeRemoveResult(a *app, target string, res *index.RemoveResult) {
	fmt.Fprintf(a.streams.ErrOut, "removed %s (%d bundles) from %s\n", strings.Join(res.Packages, ", "), len(res.Removed), target)
	t := newTheme(a.streams.ErrOut, a.streams.ErrTTY)
	for _, warn := range res.Warnings {
		fmt.Fprintf(a.streams.ErrOut, "%s %s\n", t.notePrefix(), warn)
	}
}

type indexInspectOptions struct {
	Index  string
	Output string
	Image  image.Options
}

func newIndexInspectCmd(a *app) *cobra.Command {
	opts := &indexInspectOptions{}
	cmd := &cobra.Command{
		Use:   "inspect DATABASE|IMAGE",
		Short: "Show an index's packages, channels and upgrade graph",
		Long: `Show the packages, channels, heads and upgrade edges of a sqlite index
database file, or of an index image (only the layer holding its database is
fetched).`,
		Example: `  opm index inspect index.db
  opm index inspect quay.io/me/index:3 -o json | jq '.packages[].name'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Index = args[0]
			return runIndexInspect(cmd.Context(), a, opts)
		},
	}
	addOutputFlag(cmd, &opts.Output)
	opts.Image.AddFlags(cmd.Flags())
	return cmd
}

func runIndexInspect(ctx context.Context, a *app, opts *indexInspectOptions) error {
	if err := a.checkOutput(opts.Output); err != nil {
		return err
	}
	db, done, err := indexSource(ctx, opts.Index, opts.Image)
	if err != nil {
		return interrupted(ctx, err)
	}
	defer done()
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
			return runIndexExport(cmd.Context(), a, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Index, "index", "i", "", "the sqlite index database file or index image to export")
	f.StringSliceVarP(&opts.Packages, "package", "p", nil, "comma-separated packages to export (default: all)")
	f.StringVarP(&opts.Folder, "download-folder", "f", "downloaded", "directory to write the packages into")
	opts.Image.AddFlags(f)
	return cmd
}

func runIndexExport(ctx context.Context, a *app, opts *indexExportOptions) error {
	if opts.Index == "" {
		return usageErrorf("--index is required: the index database or image to export")
	}
	db, done, err := indexSource(ctx, opts.Index, opts.Image)
	if err != nil {
		return interrupted(ctx, err)
	}
	defer done()
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
