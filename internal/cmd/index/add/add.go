// Package add is `opm index add`.
package add

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/index/indexio"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/printable"
)

// Options are the flags of opm index add.
type Options struct {
	Bundles         []string
	Database        string
	Mode            string
	Permissive      bool
	OverwriteLatest bool
	Output          string
	Load            bundle.LoadOptions
	indexflags.ImageOptions
}

// NewCmd is `opm index add`; runF, when not nil, runs instead of Run.
func NewCmd(f *factory.Factory, runF func(*Options) error) *cobra.Command {
	opts := &Options{}
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
Without --from-index, the base is --binary-image, by default opm's own
serving image of this opm's release (` + indeximage.ServingImageRepository + `:<version>, see
opm version): the opm that writes the database also serves it. A
development build has no published image: pass -i, for example an image
built with make serving-image, or upstream's quay.io/operator-framework/opm:v1.73.0
(the last upstream release that serves sqlite). The index gets entrypoint
/bin/opm, command "registry serve --database /database/index.db" and port 50051.
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
			if runF != nil {
				return runF(opts)
			}
			return Run(cmd.Context(), f, opts)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&opts.Bundles, "bundles", "b", nil, "comma-separated bundle directories or image references to add")
	fl.StringVar(&opts.Database, "database", "", "a sqlite index database file to add to (created when missing) instead of an image")
	fl.StringVar(&opts.Mode, "mode", "replaces", "graph update mode: replaces, semver or semver-skippatch")
	fl.BoolVar(&opts.Permissive, "permissive", false, "skip bundles that cannot be added, report them, and add the rest")
	fl.BoolVar(&opts.OverwriteLatest, "overwrite-latest", false, "replace a channel head's bundle by a rebuilt one of the same CSV name")
	_ = fl.MarkHidden("overwrite-latest") // hidden upstream too
	output.AddFlag(cmd, &opts.Output)
	opts.AddFlags(fl)
	bundlesource.AddFlags(fl, &opts.Load)
	return cmd
}

// Run adds the bundles to the index.
func Run(ctx context.Context, f *factory.Factory, opts *Options) error {
	if err := output.Check(opts.Output, f.From("output")); err != nil {
		return err
	}
	mode, err := index.ParseMode(opts.Mode)
	if err != nil {
		return exit.Usagef("--mode: %v", err)
	}
	if len(opts.Bundles) == 0 {
		return exit.Usagef("--bundles is required: the bundle directories or images to add")
	}
	if opts.Database == "" && !opts.ImageMode() {
		return exit.Usagef("say where to add: --tag IMAGE (with --from-index IMAGE to extend one), --generate, or --database FILE")
	}
	_, pullTool, err := opts.Check(opts.Database, f.Version().Version)
	if err != nil {
		return err
	}
	for _, b := range opts.Bundles {
		if err := bundlesource.CheckArg(b); err != nil {
			return exit.With(exit.Usage, err)
		}
	}

	// StartPull sets opts.Image.Traffic, which the client counts into.
	progress := indexio.StartPull(f, opts.Output, len(opts.Bundles), &opts.Image)
	newClient := f.ImageClient
	var client *image.Client
	if opts.Database == "" {
		// One client for the index image and the bundles: credentials are
		// looked up once per registry, and connections shared.
		if client, err = f.ImageClient(opts.Image); err != nil {
			return exit.With(exit.Usage, err)
		}
		newClient = func(image.Options) (*image.Client, error) { return client, nil }
	}
	// The bundles' text waits in a temporary file until it is written, so
	// memory does not grow with the number of bundles.
	spool, err := index.NewSpool("")
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	defer func() { _ = spool.Close() }()
	opener := bundlesource.NewOpener(opts.Image, newClient)
	opener.Load = opts.Load
	var (
		loaded  []index.LoadedBundle
		skipped []index.Skipped
	)
	load := func(ctx context.Context) error {
		defer progress.Finish()
		pulled, cleanup, err := indexio.PullWithTool(ctx, f, pullTool, opts.Bundles, opts.Image)
		defer cleanup()
		if err != nil {
			return exit.With(exit.Failed, err)
		}
		loaded, skipped, err = indexio.LoadBundles(ctx, opener, opts.Bundles, pulled, opts.Permissive, progress, spool)
		if err != nil {
			return indexio.Interrupted(ctx, err)
		}
		return nil
	}
	addOpts := index.AddOptions{Mode: mode, Permissive: opts.Permissive, OverwriteLatest: opts.OverwriteLatest}
	add := func(db *index.DB) (*index.AddResult, error) {
		res, err := db.Add(ctx, loaded, addOpts)
		if res != nil {
			// What --permissive left out before the add is reported with
			// what the add itself skipped.
			res.Skipped = append(skipped, res.Skipped...)
		}
		return res, err
	}

	if opts.Database == "" {
		// The bundles are fetched while the base image is.
		run := indexio.ImageRun{Client: client, Prepare: load}
		return indexio.ChangeImage(ctx, f, &opts.ImageOptions, run, opts.Output, add, writeAddResult)
	}
	if err := load(ctx); err != nil {
		return err
	}

	db, created, err := openOrCreate(f, opts.Database)
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	res, addErr := add(db)
	closeErr := db.Close()
	if addErr == nil {
		addErr = closeErr
	}
	if addErr != nil {
		if created {
			// A run that added nothing leaves no new file behind.
			_ = os.Remove(opts.Database)
		}
		return exit.Exactly(index.ExitCode(addErr), fmt.Errorf("add to %s: %w", opts.Database, addErr))
	}
	if opts.Output == output.JSON {
		return output.WriteJSON(f.IO.Out, res)
	}
	writeAddResult(f, opts.Database, res)
	return nil
}

func openOrCreate(f *factory.Factory, path string) (*index.DB, bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		db, err := index.Create(path)
		return db, true, err
	}
	db, err := index.OpenWith(path, index.OpenOptions{VerifiedLog: index.VerifiedLogIn(f.LookupEnv)})
	return db, false, err
}

func writeAddResult(f *factory.Factory, db string, res *index.AddResult) {
	w := f.IO.ErrOut
	t := f.IO.ErrTheme()
	// Names come from the bundles: control characters shown escaped.
	pn := printable.Name
	fmt.Fprintf(w, "added %s to %s\n", printable.Count(len(res.Added), "bundle", "bundles"), pn(db))
	for _, b := range res.Overwritten {
		fmt.Fprintf(w, "  replaced %s (%s)\n", pn(b.Name), pn(b.Package))
	}
	// Skipped bundles are warnings: --permissive goes on without them. A
	// reason several share (a package's, or a registry's) is said once.
	for _, g := range groupSkipped(res.Skipped) {
		if len(g.names) == 1 {
			fmt.Fprintf(w, "  %s skipped %s: %s\n", t.WarningPrefix(), pn(g.names[0]), printable.Text(g.reason))
			continue
		}
		names := make([]string, 0, len(g.names))
		for _, n := range g.names {
			names = append(names, pn(n))
		}
		fmt.Fprintf(w, "  %s skipped %s (%s): %s\n", t.WarningPrefix(), printable.Count(len(g.names), "bundle", "bundles"), listSome(names, maxNamesShown), printable.Text(g.reason))
	}
	for _, p := range res.Packages {
		fmt.Fprintf(w, "  %s (default channel %s)\n", pn(p.Name), pn(p.DefaultChannel))
		for _, c := range p.Channels {
			fmt.Fprintf(w, "    %s → %s\n", pn(c.Name), pn(c.Head))
		}
	}
	for _, warn := range res.Warnings {
		fmt.Fprintf(w, "%s %s\n", t.NotePrefix(), printable.Text(warn))
	}
}

// maxNamesShown is how many bundle names a grouped reason lists.
const maxNamesShown = 10

// skipGroup is a reason and the bundles skipped for it.
type skipGroup struct {
	reason string
	names  []string
	first  string // the first bundle's whole message
}

// groupSkipped groups skipped bundles by reason, in the order of the
// first of each: by the message, or, for images that could not be pulled
// for one cause of their registry's (image.SharedCause), by that cause,
// since each message names its image.
func groupSkipped(skipped []index.Skipped) []skipGroup {
	var groups []skipGroup
	at := map[string]int{}
	for _, s := range skipped {
		reason := s.Message
		if _, cause, ok := image.SharedCause(s.Reason); ok {
			reason = cause
		}
		if i, ok := at[reason]; ok {
			groups[i].names = append(groups[i].names, s.Bundle.Name)
			continue
		}
		at[reason] = len(groups)
		groups = append(groups, skipGroup{reason: reason, names: []string{s.Bundle.Name}, first: s.Message})
	}
	// A bundle alone keeps its whole message.
	for i, g := range groups {
		if len(g.names) == 1 {
			groups[i].reason = g.first
		}
	}
	return groups
}

// listSome joins the first n items and says how many more there are.
func listSome(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}
