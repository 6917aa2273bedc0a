// Package indexchange changes an index wherever it lives: an index image
// (fetch the base's database or catalog layer, convert a file-based catalog
// to a database, apply the change, render the catalog again, write every
// platform), generated files (--generate), an image built by a container
// tool, or a database file. It also opens an index for reading the same way
// (Open), and loads the bundles an add needs (LoadBundles), so that every
// command that changes or reads an index is options, one call, rendering.
//
// The mechanics of layers and images are internal/indeximage's; the sqlite
// store is internal/index's; this package puts them in order. It knows
// nothing of flags or exit statuses: errors a caller must tell apart are
// typed (ChangeError, ErrConfigsNotGenerated, OpenError).
package indexchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indeximage"
)

// Request is one change of an index image: what it starts from and where
// the result goes. Exactly one destination applies: BuildTool (an image
// built from generated files), Generate (files in GenerateDir), else Tag
// (an image written directly).
type Request struct {
	// Client reads the base and writes the result.
	Client *image.Client
	// FromIndex is the index image to change; "" starts a new index on
	// BinaryImage.
	FromIndex string
	// Tag is where the image goes (written, or built by BuildTool).
	Tag string
	// BinaryImage is the base of a new index, and the FROM of generated
	// Dockerfiles.
	BinaryImage string
	// Generate writes the database and a Dockerfile into GenerateDir (the
	// working directory when empty) instead of an image; Dockerfile names
	// it (indeximage.DefaultDockerfile when empty).
	Generate    bool
	GenerateDir string
	Dockerfile  string
	// BuildTool, when set, builds Tag from generated files with docker or
	// podman; ToolOutput receives its output.
	BuildTool  containertools.Tool
	ToolOutput io.Writer
	// Insecure lets the build tool pull FROM a plain-HTTP or self-signed
	// registry.
	Insecure bool
	// CatalogFormat is what the image carries; "" keeps FromIndex's
	// format (sqlite for a new index).
	CatalogFormat indeximage.Format
	// Compression of the layer written (gzip when empty).
	Compression indeximage.Compression
	// Cache is the database cache directory (indeximage.CacheIn; "" for
	// none): the database of an image this machine wrote last is taken
	// from it instead of downloaded, and the new one left there.
	Cache string

	// Prepare, when set, runs while the base is opened and its database
	// fetched (loading the bundles to add). The first of the two to fail
	// stops the other, and its error is the run's, returned as is.
	Prepare func(ctx context.Context) error
	// Warn, when set, receives what the user should be told before the
	// change (a binary image that is itself an index).
	Warn func(string)
	// Writing, when set, is called as the image starts to be written with
	// a count of the bytes pushed so far; the function it returns is
	// called when the write ends (a progress line).
	Writing func(pushed func() int64) (done func())
}

// Result is what a change wrote: one of its fields is set.
type Result struct {
	// Image is set when an index image was written directly.
	Image *indeximage.Result `json:"image,omitempty"`
	// Generated is set with Generate.
	Generated *Generated `json:"generated,omitempty"`
	// Built is the tag a BuildTool built.
	Built string `json:"built,omitempty"`
}

// Generated are the files Generate wrote, relative to GenerateDir when
// inside it.
type Generated struct {
	Database   string `json:"database"`
	Dockerfile string `json:"dockerfile"`
}

// Target names what was changed, for a summary line.
func (r *Result) Target() string {
	switch {
	case r.Image != nil:
		return r.Image.Reference
	case r.Generated != nil:
		return r.Generated.Database
	}
	return r.Built
}

// ChangeError is the failure of the change itself (or of what follows it
// before anything is written: compaction, rendering the catalog); nothing
// was written. Err keeps the library's error, for its exit status.
type ChangeError struct {
	// Target is the index image changed, or "the new index".
	Target string
	Err    error
}

func (e *ChangeError) Error() string {
	return fmt.Sprintf("%s: %v\nnothing was written", e.Target, e.Err)
}

func (e *ChangeError) Unwrap() error { return e.Err }

// ErrConfigsNotGenerated says that the base carries a file-based catalog,
// which opm writes into images only directly, while the request asks for
// generated files or a container tool's build.
var ErrConfigsNotGenerated = errors.New("carries a file-based catalog, which opm writes into images directly")

// Apply runs change on the database of req's index image (or of a new
// index) and writes the result where req says. The database lives in a
// private temporary directory that is always removed; nothing is written
// when change fails.
func Apply(ctx context.Context, req Request, change func(*index.DB) error) (*Result, error) {
	// With a cache, the work directory is beside it, so that the database
	// moves in and out of it without a copy.
	work := ""
	if req.Cache != "" && os.MkdirAll(req.Cache, 0o700) == nil {
		work = req.Cache
	}
	b, err := indeximage.New(req.Client, work)
	if err != nil && work != "" {
		b, err = indeximage.New(req.Client, "")
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = b.Close() }()
	b.Compression, b.Cache = req.Compression, req.Cache

	// Open the base (a wrong reference fails before any change) while the
	// bundles are fetched.
	direct := !req.Generate && req.BuildTool == ""
	openBase := func(ctx context.Context) error {
		switch {
		case req.FromIndex != "" && !direct:
			return b.FetchDatabase(ctx, req.FromIndex)
		case req.FromIndex != "":
			return b.FromIndex(ctx, req.FromIndex)
		case direct:
			return b.Base(ctx, req.BinaryImage)
		}
		return nil
	}
	if err := overlap(ctx, openBase, req.Prepare); err != nil {
		return nil, err
	}
	format := outputFormat(req.CatalogFormat, b)
	if format.HasConfigs() && !direct {
		return nil, fmt.Errorf("%s %w", req.FromIndex, ErrConfigsNotGenerated)
	}
	if err := databaseFromConfigs(ctx, b, req.FromIndex); err != nil {
		return nil, err
	}
	if dbPath, ok := b.BaseDatabase(); ok && req.Warn != nil {
		// A binary image that is an index: its bundles would silently be lost.
		req.Warn(indeximage.BinaryImageWarning(req.BinaryImage, dbPath))
	}
	if err := changeDatabase(ctx, b, req.FromIndex, format, change); err != nil {
		return nil, err
	}
	switch {
	case req.BuildTool != "":
		return build(ctx, b, req)
	case req.Generate:
		return generate(b, req)
	}
	var done func()
	if req.Writing != nil {
		done = req.Writing(b.Pushed)
	}
	res, err := b.Write(ctx, req.Tag)
	if done != nil {
		done()
	}
	if err != nil {
		return nil, fmt.Errorf("%w\nthe destination was not changed", err)
	}
	return &Result{Image: res}, nil
}

// changeDatabase opens (or creates) the builder's database, runs change,
// compacts it and renders the catalog directory format asks for. Its
// failures are ChangeErrors, unless the context was cancelled.
func changeDatabase(ctx context.Context, b *indeximage.Builder, from string, format indeximage.Format, change func(*index.DB) error) error {
	if from == "" {
		db, err := index.Create(b.DatabasePath())
		if err != nil {
			return err
		}
		if err := db.Close(); err != nil {
			return err
		}
	}
	// A database from the cache was checked when opm changed it last and
	// has not changed since: no quick_check read of the whole file.
	db, err := index.OpenWith(b.DatabasePath(), index.OpenOptions{SkipQuickCheck: b.FromCache()})
	if err != nil {
		if from != "" {
			err = fmt.Errorf("database of %s: %w", from, err)
		}
		return err
	}
	changeErr := change(db)
	if changeErr == nil {
		// The image should not carry the free pages of rebuilt packages.
		_, changeErr = db.Compact(ctx)
	}
	if err := db.Close(); changeErr == nil {
		changeErr = err
	}
	if changeErr == nil {
		changeErr = renderConfigs(ctx, b, format)
	}
	if changeErr == nil || ctx.Err() != nil {
		return changeErr
	}
	what := "the new index"
	if from != "" {
		what = from
	}
	return &ChangeError{Target: what, Err: changeErr}
}

// build generates the files in the builder's directory and builds req.Tag
// from them with req.BuildTool.
func build(ctx context.Context, b *indeximage.Builder, req Request) (*Result, error) {
	dir := filepath.Join(b.Dir(), "build")
	_, dockerfile, err := indeximage.Generate(dir, b.DatabasePath(), indeximage.DefaultDockerfile, req.BinaryImage)
	if err != nil {
		return nil, err
	}
	r, err := containertools.Find(req.BuildTool)
	if err != nil {
		return nil, fmt.Errorf("--build-tool: %w", err)
	}
	r.Stdout, r.Stderr = req.ToolOutput, req.ToolOutput
	if req.BuildTool == containertools.Podman && req.Insecure {
		// The FROM image may be on a plain-HTTP or self-signed registry too.
		r.BuildFlags = append(r.BuildFlags, "--tls-verify=false")
	}
	// The tool pulls the FROM image (--binary-image): held to opm's
	// signature policy as opm's own pulls are.
	if req.Client != nil {
		policy, checks, err := req.Client.SignaturePolicy()
		if err != nil {
			return nil, err
		}
		switch {
		case req.BuildTool == containertools.Docker && checks:
			return nil, fmt.Errorf("--build-tool docker: the signature policy %s requires signatures, which docker does not check when it pulls the --binary-image %s: build with podman (given the policy) or without a build tool", policy, req.BinaryImage)
		case req.BuildTool != containertools.Docker && policy != "":
			r.BuildFlags = append(r.BuildFlags, "--signature-policy", policy)
		}
	}
	args := r.BuildArgs(dockerfile, req.Tag, dir)
	if err := r.Run(ctx, dir, args...); err != nil {
		return nil, err
	}
	return &Result{Built: req.Tag}, nil
}

// generate writes the database and the Dockerfile into req.GenerateDir.
func generate(b *indeximage.Builder, req Request) (*Result, error) {
	dir := req.GenerateDir
	if dir == "" {
		var err error
		if dir, err = os.Getwd(); err != nil {
			return nil, err
		}
	}
	name := req.Dockerfile
	if name == "" {
		name = indeximage.DefaultDockerfile
	}
	dbOut, dockerfile, err := indeximage.Generate(dir, b.DatabasePath(), name, req.BinaryImage)
	if err != nil {
		return nil, err
	}
	return &Result{Generated: &Generated{Database: relTo(dir, dbOut), Dockerfile: relTo(dir, dockerfile)}}, nil
}

// overlap runs base and prepare (when not nil) at once. The first to fail
// cancels the other, and its error is returned: an error the other gives
// because it was cancelled is not the cause.
func overlap(ctx context.Context, base, prepare func(context.Context) error) error {
	if prepare == nil {
		return base(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		first error
	)
	fail := func(err error) {
		if err == nil {
			return
		}
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		cancel()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fail(prepare(ctx))
	}()
	fail(base(ctx))
	<-done
	return first
}

func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && !strings.HasPrefix(r, "..") {
		return r
	}
	return p
}
