// Package indexio runs the index commands' library calls and renders their
// results: a change of an index image or database file (Change), opening
// an index argument (Source), and loading the bundles to add (LoadBundles).
// The work itself is internal/indexchange's; the flags are indexflags'.
package indexio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/index/indexflags"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indexchange"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/printable"
)

// LoadBundles loads the bundles to add (see indexchange.LoadBundles)
// through opener. from, when it has an entry for an argument, names where
// to read that bundle instead (an archive a pull tool saved). progress,
// when not nil, counts each bundle loaded.
func LoadBundles(ctx context.Context, opener *bundlesource.Opener, args []string, from map[string]string, permissive bool, progress *iostreams.Progress, spool *index.Spool) ([]index.LoadedBundle, []index.Skipped, error) {
	return indexchange.LoadBundles(ctx, indexchange.Bundles{
		Args: args,
		Open: func(ctx context.Context, from string) (*bundle.Bundle, bool, error) {
			ob, err := opener.Open(ctx, from)
			if ob == nil {
				return nil, false, err
			}
			return ob.Bundle, ob.Local, err
		},
		From:       from,
		Permissive: permissive,
		Step:       progress.Step,
		Spool:      spool,
	})
}

// PullWithTool pulls the bundle images among args with tool into archives
// (see indexchange.PullWithTool), the tool's output on stderr, held to the
// signature policy of opts.
func PullWithTool(ctx context.Context, f *factory.Factory, tool containertools.Tool, args []string, opts image.Options) (map[string]string, func(), error) {
	newClient := func() (*image.Client, error) { return f.ImageClient(opts) }
	return indexchange.PullWithTool(ctx, tool, args, opts.UseHTTP || opts.SkipTLSVerify, newClient, f.IO.ErrOut)
}

// StartPull is the progress line of bundles being loaded ("bundles 3/10,
// 1.2 MiB pulled"): only on a terminal with text output. The bytes are
// those of image clients made from opts from now on (it sets
// opts.Traffic).
func StartPull(f *factory.Factory, format string, total int, opts *image.Options) *iostreams.Progress {
	p := output.Progress(f.IO, format, "bundles", total)
	if p == nil {
		return nil
	}
	if opts.Traffic == nil {
		opts.Traffic = &image.Traffic{}
	}
	t := opts.Traffic
	return p.SetDetail(func() string {
		if n := t.Received.Load(); n > 0 {
			return layerfs.HumanSize(n) + " pulled"
		}
		return ""
	})
}

// Source opens an index argument: a database file, or an index image
// (see indexchange.Open). done closes it and removes the temporary files.
// A database file with a killed writer's journal is read through a
// rolled-back private copy, and Source says so on stderr.
func Source(ctx context.Context, f *factory.Factory, arg string, opts image.Options) (db *index.DB, done func(), err error) {
	db, done, err = indexchange.Open(ctx, arg, func() (*image.Client, error) { return f.ImageClient(opts) })
	if err == nil && db.RolledBack() {
		WarnRolledBack(f, arg)
	}
	return db, done, err
}

// WarnRolledBack says on stderr that the database file path had a killed
// writer's journal and what was read is a rolled-back private copy.
func WarnRolledBack(f *factory.Factory, path string) {
	fmt.Fprintf(f.IO.ErrOut, "%s %s\n", f.IO.ErrTheme().WarningPrefix(), printable.Text(index.RolledBackWarning(path)))
}

// Interrupted turns a cancelled context into exit status 130.
func Interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return exit.With(exit.Interrupted, fmt.Errorf("interrupted; nothing was written: %w", err))
	}
	return exit.With(exit.Failed, err)
}

// ImageRun is what a change of an index image shares with the rest of its
// command. The zero value makes a client with f.ImageClient and prepares
// nothing.
type ImageRun struct {
	// Client is the run's one image client (the bundles' too, so that
	// credentials are looked up once and connections are shared); nil
	// makes one.
	Client *image.Client
	// Prepare, when set, runs while the base image is opened and its
	// database fetched: loading the bundles to add. The first of the two
	// to fail stops the other, and its error is the run's.
	Prepare func(ctx context.Context) error
}

// ChangeWords name an index-changing command in its messages.
type ChangeWords struct {
	// Verb heads database errors: "<Verb> <file>: ...".
	Verb string
	// Purpose ends the usage error when neither --database nor --from-index
	// is given: "the index image to <Purpose>".
	Purpose string
	// OpenErrors leaves a missing database file to the library's open
	// error, as index rm always reported it, instead of "<Verb> <file>".
	OpenErrors bool
}

// Change runs change on the database file database when it is given, or
// else on the index image of o (see ChangeImage), after checking the image
// flags against that choice, and renders its result with write.
func Change[R any](ctx context.Context, f *factory.Factory, o *indexflags.ImageOptions, database, format string, words ChangeWords,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	if database != "" {
		if _, _, err := o.Check(database, f.Version().Version); err != nil {
			return err
		}
		return changeFile(f, database, format, words, change, write)
	}
	if o.FromIndex == "" {
		return exit.Usagef("--from-index is required: the index image to %s (or --database FILE)", words.Purpose)
	}
	if _, _, err := o.Check("", f.Version().Version); err != nil {
		return err
	}
	return ChangeImage(ctx, f, o, ImageRun{}, format, change, write)
}

// changeFile runs change on the database file path and renders its
// result: text on stderr, or JSON on stdout.
func changeFile[R any](f *factory.Factory, path, format string, words ChangeWords,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	var res R
	err := indexchange.ApplyFile(path, indexchange.FileOptions{MustExist: !words.OpenErrors, VerifiedLog: index.VerifiedLogIn(f.LookupEnv)},
		func(db *index.DB) (err error) { res, err = change(db); return err })
	var open *indexchange.OpenError
	switch {
	case errors.As(err, &open):
		return exit.With(exit.Failed, open.Err)
	case err != nil:
		return exit.With(exit.Failed, fmt.Errorf("%s %s: %w", words.Verb, path, err))
	case format == output.JSON:
		return output.WriteJSON(f.IO.Out, res)
	}
	write(f, path, res)
	return nil
}

// ChangeImage runs change (an add or a remove) on the index image's
// database with indexchange.Apply, and renders its result with the image
// summary: text on stderr, or one JSON document holding both. The options
// must have passed Check.
func ChangeImage[R any](ctx context.Context, f *factory.Factory, o *indexflags.ImageOptions, run ImageRun, format string,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	req, err := o.Request()
	if err != nil {
		return err
	}
	if req.Client = run.Client; req.Client == nil {
		if req.Client, err = f.ImageClient(o.Image); err != nil {
			return exit.With(exit.Usage, err)
		}
	}
	req.Prepare = run.Prepare
	req.Cache = indeximage.CacheIn(f.LookupEnv)
	req.ToolOutput = f.IO.ErrOut
	req.Warn = func(w string) { fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", w) }
	req.Writing = func(pushed func() int64) func() {
		progress := output.Progress(f.IO, format, "", 0)
		stop := progress.Tick(200*time.Millisecond, func() string {
			return fmt.Sprintf("writing %s: %s pushed", o.Tag, layerfs.HumanSize(pushed()))
		})
		return func() { stop(); progress.Finish() }
	}
	var res R
	out, err := indexchange.Apply(ctx, req, func(db *index.DB) (err error) { res, err = change(db); return err })
	if err != nil {
		return imageError(ctx, o, run, err)
	}
	if format == output.JSON {
		return output.WriteJSON(f.IO.Out, mergeJSON(res, out))
	}
	write(f, out.Target(), res)
	writeImageOutput(f, out)
	return nil
}

// imageError gives an error of indexchange.Apply its exit status.
func imageError(ctx context.Context, o *indexflags.ImageOptions, run ImageRun, err error) error {
	var (
		ee     *exit.Error
		change *indexchange.ChangeError
	)
	switch {
	case run.Prepare != nil && errors.As(err, &ee):
		return err // Prepare's own, already given its status
	case errors.Is(err, indexchange.ErrConfigsNotGenerated):
		// Only reached when the --from-index image brought the format:
		// Check refuses --catalog-format fbc|both with these already.
		return exit.Usagef("%s carries a file-based catalog, which opm writes into images directly; drop --generate and --build-tool, or add --%s sqlite", o.FromIndex, indexflags.FlagCatalogFormat)
	case errors.As(err, &change):
		return exit.Exactly(index.ExitCode(change.Err), err)
	}
	return Interrupted(ctx, err)
}

// mergeJSON puts the fields of two JSON objects into one, as the embedded
// structs of the original output did.
func mergeJSON(a, b any) map[string]json.RawMessage {
	m := map[string]json.RawMessage{}
	for _, v := range []any{a, b} {
		raw, err := json.Marshal(v)
		if err != nil {
			continue
		}
		var part map[string]json.RawMessage
		if json.Unmarshal(raw, &part) == nil {
			for k, x := range part {
				m[k] = x
			}
		}
	}
	return m
}

func writeImageOutput(f *factory.Factory, out *indexchange.Result) {
	w := f.IO.ErrOut
	t := f.IO.ErrTheme()
	switch {
	case out.Generated != nil:
		fmt.Fprintf(w, "wrote %s and %s (build with: podman build -f %s -t IMAGE .)\n", out.Generated.Database, out.Generated.Dockerfile, out.Generated.Dockerfile)
	case out.Built != "":
		fmt.Fprintf(w, "built %s\n", out.Built)
	case out.Image != nil:
		r := out.Image
		var plats []string
		for _, p := range r.Platforms {
			plats = append(plats, p.Platform)
		}
		fmt.Fprintf(w, "wrote %s@%s (%s)\n", r.Reference, r.Digest, strings.Join(plats, ", "))
		layer := "database layer"
		if r.CatalogFormat.HasConfigs() {
			var paths []string
			for _, p := range []string{r.DatabasePath, r.ConfigsPath} {
				if p != "" {
					paths = append(paths, p)
				}
			}
			if r.CachePath != "" {
				paths = append(paths, "serve cache "+r.CachePath)
			}
			layer = fmt.Sprintf("catalog layer (%s: %s)", r.CatalogFormat, strings.Join(paths, ", "))
		}
		how := "added on top of the base layers"
		if r.ReplacedLayers > 0 {
			how = "replaced the previous " + strings.SplitN(layer, " (", 2)[0]
		}
		fmt.Fprintf(w, "  %s %s, %s: %s\n", layer, shortDigest(r.DatabaseLayer), layerfs.HumanSize(r.DatabaseLayerSize), how)
		fmt.Fprintf(w, "  pulled %s, pushed %s\n", layerfs.HumanSize(r.BytesPulled), layerfs.HumanSize(r.BytesPushed))
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "%s %s\n", t.NotePrefix(), printable.Text(warn))
		}
	}
}

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}
