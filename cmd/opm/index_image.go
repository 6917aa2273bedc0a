package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indeximage"
)

// indexImageOutput is what an image-mode index add or rm wrote.
type indexImageOutput struct {
	// Image is set when an index image was written directly.
	Image *indeximage.Result `json:"image,omitempty"`
	// Generated is set with --generate.
	Generated *generatedFiles `json:"generated,omitempty"`
	// Built is the tag a --build-tool built.
	Built string `json:"built,omitempty"`
}

type generatedFiles struct {
	Database   string `json:"database"`
	Dockerfile string `json:"dockerfile"`
}

// target names what was changed, for the summary line.
func (o *indexImageOutput) target() string {
	switch {
	case o.Image != nil:
		return o.Image.Reference
	case o.Generated != nil:
		return o.Generated.Database
	}
	return o.Built
}

// interrupted turns a cancelled context into exit status 130.
func interrupted(ctx context.Context, err error) error {
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return &ExitError{Code: exitInterrupted, Err: fmt.Errorf("interrupted; nothing was written: %w", err)}
	}
	return &ExitError{Code: exitFailed, Err: err}
}

// runIndexImage runs change on the database of an index image (or of a new
// index), then writes the result as --generate files, builds it with a
// container tool, or writes the image to --tag. The database lives in a
// private temporary directory that is always removed; nothing is written
// when change fails.
func runIndexImage(ctx context.Context, a *app, o *indexImageOptions, change func(*index.DB) error) (*indexImageOutput, error) {
	build, _, err := o.tools()
	if err != nil {
		return nil, err
	}
	client, err := image.NewClient(o.Image)
	if err != nil {
		return nil, &ExitError{Code: exitUsage, Err: err}
	}
	b, err := indeximage.New(client, "")
	if err != nil {
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	defer func() { _ = b.Close() }()

	// Open the base first: a wrong reference fails before any work.
	switch {
	case o.FromIndex != "" && (o.Generate || build != ""):
		err = b.FetchDatabase(ctx, o.FromIndex)
	case o.FromIndex != "":
		err = b.FromIndex(ctx, o.FromIndex)
	case !o.Generate && build == "":
		err = b.Base(ctx, o.BinaryImage)
	}
	if err != nil {
		return nil, interrupted(ctx, err)
	}
	if o.FromIndex == "" {
		db, err := index.Create(b.DatabasePath())
		if err != nil {
			return nil, &ExitError{Code: exitFailed, Err: err}
		}
		if err := db.Close(); err != nil {
			return nil, &ExitError{Code: exitFailed, Err: err}
		}
	}
	db, err := index.Open(b.DatabasePath())
	if err != nil {
		if o.FromIndex != "" {
			err = fmt.Errorf("database of %s: %w", o.FromIndex, err)
		}
		return nil, &ExitError{Code: exitFailed, Err: err}
	}
	changeErr := change(db)
	if changeErr == nil {
		// The image should not carry the free pages of rebuilt packages.
		_, changeErr = db.Compact(ctx)
	}
	if err := db.Close(); changeErr == nil {
		changeErr = err
	}
	if changeErr != nil {
		what := "the new index"
		if o.FromIndex != "" {
			what = o.FromIndex
		}
		if ctx.Err() != nil {
			return nil, interrupted(ctx, changeErr)
		}
		return nil, &ExitError{Code: index.ExitCode(changeErr), Err: fmt.Errorf("%s: %w\nnothing was written", what, changeErr)}
	}

	switch {
	case build != "":
		dir := filepath.Join(b.Dir(), "build")
		_, dockerfile, err := indeximage.Generate(dir, b.DatabasePath(), indeximage.DefaultDockerfile, o.BinaryImage)
		if err != nil {
			return nil, &ExitError{Code: exitFailed, Err: err}
		}
		r, err := containertools.Find(build)
		if err != nil {
			return nil, &ExitError{Code: exitFailed, Err: fmt.Errorf("--build-tool: %w", err)}
		}
		r.Stdout, r.Stderr = a.streams.ErrOut, a.streams.ErrOut
		args := r.BuildArgs(dockerfile, o.Tag, dir)
		if build == containertools.Podman && (o.Image.UseHTTP || o.Image.SkipTLSVerify) {
			// The FROM image may be on a plain-HTTP or self-signed registry too.
			args = append([]string{args[0], "--tls-verify=false"}, args[1:]...)
		}
		if err := r.Run(ctx, dir, args...); err != nil {
			return nil, interrupted(ctx, err)
		}
		return &indexImageOutput{Built: o.Tag}, nil
	case o.Generate:
		cwd, err := os.Getwd()
		if err != nil {
			return nil, &ExitError{Code: exitFailed, Err: err}
		}
		dbOut, dockerfile, err := indeximage.Generate(cwd, b.DatabasePath(), o.OutDockerfile, o.BinaryImage)
		if err != nil {
			return nil, &ExitError{Code: exitFailed, Err: err}
		}
		return &indexImageOutput{Generated: &generatedFiles{Database: relTo(cwd, dbOut), Dockerfile: relTo(cwd, dockerfile)}}, nil
	}
	res, err := b.Write(ctx, o.Tag)
	if err != nil {
		return nil, interrupted(ctx, fmt.Errorf("%w\nthe destination was not changed", err))
	}
	return &indexImageOutput{Image: res}, nil
}

func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}

// changeIndexImage runs change (an add or a remove) on the index image's
// database through runIndexImage and renders its result with the image
// summary: text on stderr, or one JSON document holding both.
func changeIndexImage[R any](ctx context.Context, a *app, o *indexImageOptions, output string,
	change func(*index.DB) (R, error), write func(*app, string, R)) error {
	var res R
	out, err := runIndexImage(ctx, a, o, func(db *index.DB) error {
		var err error
		res, err = change(db)
		return err
	})
	if err != nil {
		return err
	}
	if output == outputJSON {
		return writeJSON(a.streams.Out, mergeJSON(res, out))
	}
	write(a, out.target(), res)
	writeImageOutput(a, out)
	return nil
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

func writeImageOutput(a *app, out *indexImageOutput) {
	w := a.streams.ErrOut
	t := newTheme(w, a.streams.ErrTTY)
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
		how := "added on top of the base layers"
		if r.ReplacedLayers > 0 {
			how = "replaced the previous database layer"
		}
		fmt.Fprintf(w, "  database layer %s, %s: %s\n", shortDigest(r.DatabaseLayer), layerfs.HumanSize(r.DatabaseLayerSize), how)
		fmt.Fprintf(w, "  pulled %s, pushed %s\n", layerfs.HumanSize(r.BytesPulled), layerfs.HumanSize(r.BytesPushed))
		for _, warn := range r.Warnings {
			fmt.Fprintf(w, "%s %s\n", t.notePrefix(), warn)
		}
	}
}

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// pullWithTool pulls the bundle images among args with docker or podman
// and saves each to an archive in a temporary directory, so that bundles
// come from the tool's storage and configuration. It returns, per argument,
// the archive to read. cleanup removes the archives.
func pullWithTool(ctx context.Context, a *app, tool containertools.Tool, args []string, opts image.Options) (map[string]string, func(), error) {
	if tool == "" {
		return nil, func() {}, nil
	}
	r, err := containertools.Find(tool)
	if err != nil {
		return nil, func() {}, fmt.Errorf("--pull-tool: %w", err)
	}
	r.Stdout, r.Stderr = a.streams.ErrOut, a.streams.ErrOut
	dir, err := os.MkdirTemp("", "opm-pull-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	out := map[string]string{}
	for i, arg := range args {
		if local, _ := isLocal(arg); local {
			continue
		}
		ref, err := image.ParseReference(arg)
		if err != nil || ref.Transport != image.TransportRegistry {
			continue // archives and layouts are read directly
		}
		pull := []string{"pull", ref.Name}
		if tool == containertools.Podman && (opts.UseHTTP || opts.SkipTLSVerify) {
			pull = []string{"pull", "--tls-verify=false", ref.Name}
		}
		if err := r.Run(ctx, "", pull...); err != nil {
			return nil, cleanup, err
		}
		file := filepath.Join(dir, fmt.Sprintf("bundle-%d.tar", i))
		if tool == containertools.Podman {
			err = r.Run(ctx, "", "save", "--format", "oci-archive", "-o", file, ref.Name)
			out[arg] = "oci-archive:" + file
		} else {
			err = r.Run(ctx, "", "save", "-o", file, ref.Name)
			out[arg] = "docker-archive:" + file
		}
		if err != nil {
			return nil, cleanup, err
		}
	}
	return out, cleanup, nil
}

// indexSource opens an index argument: a database file as is, anything else
// as an index image whose database layer is fetched into a temporary
// directory. done closes it and removes the temporary files.
func indexSource(ctx context.Context, arg string, opts image.Options) (db *index.DB, done func(), err error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() || !image.LooksLikeReference(arg) {
		db, err := index.OpenReadOnly(arg)
		if err != nil {
			return nil, nil, err
		}
		return db, func() { _ = db.Close() }, nil
	}
	client, err := image.NewClient(opts)
	if err != nil {
		return nil, nil, err
	}
	b, err := indeximage.New(client, "")
	if err != nil {
		return nil, nil, err
	}
	if err := b.FetchDatabase(ctx, arg); err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	db, err = index.OpenReadOnly(b.DatabasePath())
	if err != nil {
		_ = b.Close()
		return nil, nil, fmt.Errorf("database of %s: %w", arg, err)
	}
	return db, func() { _ = db.Close(); _ = b.Close() }, nil
}
