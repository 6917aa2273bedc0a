// Package indexio holds what the index commands share: the index image
// flags of add and rm, changing an index image's database and writing the
// result, opening an index argument (a database file or an image), and
// loading the bundles to add.
package indexio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/cmd/bundlesource"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/cmd/output"
	"github.com/opmkit/opm/internal/containertools"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/layerfs"
	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/indeximage"
	"github.com/opmkit/opm/internal/iostreams"
	"github.com/opmkit/opm/internal/validate"
)

// ImageOptions are the flags index add and index rm share for index
// images, as upstream opm had them.
type ImageOptions struct {
	FromIndex     string
	Tag           string
	BinaryImage   string
	Generate      bool
	OutDockerfile string
	ContainerTool string
	BuildTool     string
	PullTool      string
	EnableAlpha   bool
	// CatalogFormat is sqlite, fbc or both; "" keeps the --from-index
	// image's format (sqlite for a new index).
	CatalogFormat string
	// LayerCompression is --layer-compression: gzip or zstd.
	LayerCompression string
	Image            image.Options
}

// layerCompressionUsage is the help of --layer-compression.
const layerCompressionUsage = "compression of the layer opm writes (database and catalog): gzip (every runtime reads it) or zstd (several times faster to write and read, and smaller; read by containerd 1.5+, CRI-O and podman, not by older runtimes; needs an OCI base image)"

// AddFlags adds the index image flags to f.
func (o *ImageOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.FromIndex, "from-index", "f", "", "index image to start from (only its database layer is fetched)")
	f.StringVarP(&o.Tag, "tag", "t", "", "where to write the index image: a registry reference, oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:NAME]")
	f.StringVarP(&o.BinaryImage, "binary-image", "i", "", "base image of a new index (its opm serves the database); also the FROM of --generate's Dockerfile (default: "+indeximage.ServingImageRepository+":<this opm's version>, opm's own serving image; a development build has none)")
	f.BoolVar(&o.Generate, "generate", false, "write database/index.db and the Dockerfile in the working directory instead of an image")
	f.StringVarP(&o.OutDockerfile, "out-dockerfile", "d", "", "name of the Dockerfile --generate writes (default "+indeximage.DefaultDockerfile+")")
	f.StringVarP(&o.ContainerTool, "container-tool", "c", "", "docker or podman for both --pull-tool and --build-tool (default: none, opm works without a container tool)")
	f.StringVarP(&o.BuildTool, "build-tool", "u", "", "build the image with docker or podman from a generated Dockerfile instead of writing it directly")
	f.StringVarP(&o.PullTool, "pull-tool", "p", "", "pull bundle images with docker or podman (their local storage and configuration) instead of directly; none is the default")
	f.BoolVar(&o.EnableAlpha, "enable-alpha", false, "accepted for compatibility with upstream opm; opm has no alpha index features")
	f.StringVar(&o.CatalogFormat, FlagCatalogFormat, "", "what the index image carries: sqlite (the database), fbc (a file-based catalog in /configs with its serve cache, served with opm serve) or both (default: the --from-index image's format, else sqlite)")
	f.StringVar(&o.LayerCompression, "layer-compression", string(indeximage.Gzip), layerCompressionUsage)
	o.Image.AddFlags(f)
}

// tools resolves -c, -u and -p: "" means opm's own code.
func (o *ImageOptions) tools() (build, pull containertools.Tool, err error) {
	parse := func(flag, v string) (containertools.Tool, error) {
		switch v {
		case "", "none":
			return "", nil
		case "docker", "podman":
			return containertools.Tool(v), nil
		}
		return "", exit.Usagef("--%s %q: use docker or podman (or none)", flag, v)
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

// ImageMode says whether the options ask for an index image (or its
// generated files) rather than a database file.
func (o *ImageOptions) ImageMode() bool {
	return o.FromIndex != "" || o.Tag != "" || o.Generate || o.BuildTool != "" || o.ContainerTool != "" || o.CatalogFormat != ""
}

// Check validates the image options before anything is read. version is
// the running opm's: without -i, a new index is based on opm's serving
// image of that version, which a development build does not have.
func (o *ImageOptions) Check(database, version string) (build, pull containertools.Tool, err error) {
	build, pull, err = o.tools()
	if err != nil {
		return "", "", err
	}
	if err := o.checkCatalogFormat(string(build)); err != nil {
		return "", "", err
	}
	if err := o.Image.Validate(); err != nil {
		return "", "", exit.Usagef("%v", err)
	}
	if _, err := indeximage.ParseCompression(o.LayerCompression); err != nil {
		return "", "", exit.Usagef("--layer-compression: %v", err)
	}
	if database != "" {
		if o.ImageMode() {
			return "", "", exit.Usagef("--database works on a database file; drop --from-index, --tag, --generate, --catalog-format and the tool flags, or drop --database")
		}
		return build, pull, nil
	}
	switch {
	case o.Generate:
		if o.Tag != "" && build == "" {
			return "", "", exit.Usagef("--generate writes files and builds no image; drop --tag, or add --build-tool to build one")
		}
	case o.Tag == "":
		return "", "", exit.Usagef("--tag is required: where to write the index image (or use --generate, or --database FILE)")
	}
	if o.Tag != "" && build == "" {
		if _, err := image.ParseReference(o.Tag); err != nil {
			return "", "", exit.Usagef("--tag: %v", err)
		}
	}
	if o.BinaryImage == "" && (o.FromIndex == "" || o.Generate || build != "") {
		if o.BinaryImage, err = indeximage.DefaultBinaryImage(version); err != nil {
			return "", "", exit.Usagef("no -i/--binary-image given, and %w", err)
		}
	}
	for flag, v := range map[string]string{"from-index": o.FromIndex, "binary-image": o.BinaryImage} {
		if v == "" {
			continue
		}
		if _, err := image.ParseReference(v); err != nil {
			return "", "", exit.Usagef("--%s: %v", flag, err)
		}
	}
	return build, pull, nil
}

// LoadBundles opens every bundle, several at once, and checks each with
// validate.CheckForIndex, the index rules of opm bundle validate. Without
// permissive, any bundle that cannot be read whole or that the rules refuse
// fails the run with every problem found (refusals name their rule ids),
// before anything is written. With permissive, such bundles are returned as
// skipped, each with its reason, and the rest loaded. open, when it has an
// entry for an argument, names where to read that bundle from instead (an
// archive a pull tool saved); the index still records the argument.
// progress, when not nil, counts each bundle loaded. All but what the add
// needs to group the bundles waits in spool (see index.Prepare) until they
// are added.
func LoadBundles(ctx context.Context, opener *bundlesource.Opener, args []string, open map[string]string, permissive bool, progress *iostreams.Progress, spool *index.Spool) ([]index.LoadedBundle, []index.Skipped, error) {
	out := make([]index.LoadedBundle, len(args))
	errs := make([]error, len(args))
	// unreachable marks images that could not be opened at all, as opposed
	// to bundles that were read and found broken: the advice differs.
	unreachable := make([]bool, len(args))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0)+2)
	var wg sync.WaitGroup
	for i, arg := range args {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			defer progress.Step()
			from := arg
			if o, ok := open[arg]; ok {
				from = o
			}
			ob, err := opener.Open(ctx, from)
			if ob != nil && ctx.Err() == nil {
				// What was read is judged by the index rules, so that a
				// refusal names the rule ids bundle validate gives.
				if refused := validate.CheckForIndex(arg, ob.Bundle, err).Err(); refused != nil {
					errs[i] = refused
					return
				}
			}
			if err != nil {
				errs[i] = fmt.Errorf("load bundle %s: %w", arg, err)
				if ob == nil {
					local, _ := bundlesource.IsLocal(from)
					unreachable[i] = !local
				}
				return
			}
			// Only the rows are kept, their text in the spool: thousands
			// of parsed bundles would hold gigabytes.
			out[i] = index.Prepare(index.LoadedBundle{Bundle: ob.Bundle, BundlePath: arg, Local: ob.Local}, spool)
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, nil, ctx.Err()
	}
	if !permissive {
		if err := errors.Join(errs...); err != nil {
			return nil, nil, fmt.Errorf("%w\n%s (--permissive adds the other bundles)", err, loadAdvice(args, errs, unreachable))
		}
		return out, nil, nil
	}
	var loaded []index.LoadedBundle
	var skipped []index.Skipped
	for i, err := range errs {
		if err == nil {
			loaded = append(loaded, out[i])
			continue
		}
		ref := index.BundleRef{Path: args[i], Name: args[i]}
		var refused *validate.RefusedError
		if errors.As(err, &refused) && refused.Report.Name != "" {
			ref.Name = refused.Report.Name
		}
		skipped = append(skipped, index.Skipped{Bundle: ref, Reason: err, Message: err.Error()})
	}
	return loaded, skipped, nil
}

// loadAdvice says what to do about bundles that failed to load: images
// that could not be opened need their reference or access checked; bundles
// that were read but are broken are explained by opm bundle validate.
func loadAdvice(args []string, errs []error, unreachable []bool) string {
	var broken []string
	images := 0
	for i, err := range errs {
		switch {
		case err == nil:
		case unreachable[i]:
			images++
		default:
			broken = append(broken, args[i])
		}
	}
	advice := "nothing was added"
	if images > 0 {
		advice += "; check that each image reference exists and can be pulled (credentials: --authfile; a private CA: --ca-file)"
	}
	if len(broken) > 0 {
		advice += fmt.Sprintf("; `opm bundle validate %s` shows every problem with its fix", strings.Join(broken, " "))
	}
	return advice
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

// runIndexImage runs change on the database of an index image (or of a new
// index), then writes the result as --generate files, builds it with a
// container tool, or writes the image to --tag. The database lives in a
// private temporary directory that is always removed; nothing is written
// when change fails.
// outFormat is the command's -o, for the progress line of the push.
func runIndexImage(ctx context.Context, f *factory.Factory, o *ImageOptions, outFormat string, run ImageRun, change func(*index.DB) error) (*indexImageOutput, error) {
	build, _, err := o.tools()
	if err != nil {
		return nil, err
	}
	client := run.Client
	if client == nil {
		if client, err = f.ImageClient(o.Image); err != nil {
			return nil, exit.With(exit.Usage, err)
		}
	}
	b, err := indeximage.New(client, "")
	if err != nil {
		return nil, exit.With(exit.Failed, err)
	}
	defer func() { _ = b.Close() }()
	if b.Compression, err = indeximage.ParseCompression(o.LayerCompression); err != nil {
		return nil, exit.Usagef("--layer-compression: %v", err)
	}

	// Open the base (a wrong reference fails before any change) while the
	// bundles are fetched.
	openBase := func(ctx context.Context) error {
		var err error
		switch {
		case o.FromIndex != "" && (o.Generate || build != ""):
			err = b.FetchDatabase(ctx, o.FromIndex)
		case o.FromIndex != "":
			err = b.FromIndex(ctx, o.FromIndex)
		case !o.Generate && build == "":
			err = b.Base(ctx, o.BinaryImage)
		}
		if err != nil {
			return Interrupted(ctx, err)
		}
		return nil
	}
	if err := overlap(ctx, openBase, run.Prepare); err != nil {
		return nil, err
	}
	format := o.outputFormat(b)
	if format.HasConfigs() && (o.Generate || build != "") {
		// Only reached when the --from-index image brought the format:
		// Check refuses --catalog-format fbc|both with these already.
		return nil, exit.Usagef("%s carries a file-based catalog, which opm writes into images directly; drop --generate and --build-tool, or add --%s sqlite", o.FromIndex, FlagCatalogFormat)
	}
	if err := databaseFromConfigs(ctx, b, o.FromIndex); err != nil {
		return nil, Interrupted(ctx, err)
	}
	if dbPath, ok := b.BaseDatabase(); ok {
		// -i given an index image: its bundles would silently be lost.
		fmt.Fprintf(f.IO.ErrOut, "warning: %s\n", indeximage.BinaryImageWarning(o.BinaryImage, dbPath))
	}
	if o.FromIndex == "" {
		db, err := index.Create(b.DatabasePath())
		if err != nil {
			return nil, exit.With(exit.Failed, err)
		}
		if err := db.Close(); err != nil {
			return nil, exit.With(exit.Failed, err)
		}
	}
	db, err := index.Open(b.DatabasePath())
	if err != nil {
		if o.FromIndex != "" {
			err = fmt.Errorf("database of %s: %w", o.FromIndex, err)
		}
		return nil, exit.With(exit.Failed, err)
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
	if changeErr != nil {
		what := "the new index"
		if o.FromIndex != "" {
			what = o.FromIndex
		}
		if ctx.Err() != nil {
			return nil, Interrupted(ctx, changeErr)
		}
		return nil, exit.Exactly(index.ExitCode(changeErr), fmt.Errorf("%s: %w\nnothing was written", what, changeErr))
	}

	switch {
	case build != "":
		dir := filepath.Join(b.Dir(), "build")
		_, dockerfile, err := indeximage.Generate(dir, b.DatabasePath(), indeximage.DefaultDockerfile, o.BinaryImage)
		if err != nil {
			return nil, exit.With(exit.Failed, err)
		}
		r, err := containertools.Find(build)
		if err != nil {
			return nil, exit.With(exit.Failed, fmt.Errorf("--build-tool: %w", err))
		}
		r.Stdout, r.Stderr = f.IO.ErrOut, f.IO.ErrOut
		args := r.BuildArgs(dockerfile, o.Tag, dir)
		if build == containertools.Podman && (o.Image.UseHTTP || o.Image.SkipTLSVerify) {
			// The FROM image may be on a plain-HTTP or self-signed registry too.
			args = append([]string{args[0], "--tls-verify=false"}, args[1:]...)
		}
		if err := r.Run(ctx, dir, args...); err != nil {
			return nil, Interrupted(ctx, err)
		}
		return &indexImageOutput{Built: o.Tag}, nil
	case o.Generate:
		cwd, err := os.Getwd()
		if err != nil {
			return nil, exit.With(exit.Failed, err)
		}
		name := o.OutDockerfile
		if name == "" {
			name = indeximage.DefaultDockerfile
		}
		dbOut, dockerfile, err := indeximage.Generate(cwd, b.DatabasePath(), name, o.BinaryImage)
		if err != nil {
			return nil, exit.With(exit.Failed, err)
		}
		return &indexImageOutput{Generated: &generatedFiles{Database: relTo(cwd, dbOut), Dockerfile: relTo(cwd, dockerfile)}}, nil
	}
	progress := output.Progress(f.IO, outFormat, "", 0)
	stop := progress.Tick(200*time.Millisecond, func() string {
		return fmt.Sprintf("writing %s: %s pushed", o.Tag, layerfs.HumanSize(b.Pushed()))
	})
	res, err := b.Write(ctx, o.Tag)
	stop()
	progress.Finish()
	if err != nil {
		return nil, Interrupted(ctx, fmt.Errorf("%w\nthe destination was not changed", err))
	}
	return &indexImageOutput{Image: res}, nil
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

// ChangeImage runs change (an add or a remove) on the index image's
// database through runIndexImage and renders its result with the image
// summary: text on stderr, or one JSON document holding both.
func ChangeImage[R any](ctx context.Context, f *factory.Factory, o *ImageOptions, format string,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	return ChangeImageWith(ctx, f, o, ImageRun{}, format, change, write)
}

// ChangeImageWith is ChangeImage with the run's image client and the work
// to overlap with fetching the base (ImageRun).
func ChangeImageWith[R any](ctx context.Context, f *factory.Factory, o *ImageOptions, run ImageRun, format string,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	var res R
	out, err := runIndexImage(ctx, f, o, format, run, func(db *index.DB) error {
		var err error
		res, err = change(db)
		return err
	})
	if err != nil {
		return err
	}
	if format == output.JSON {
		return output.WriteJSON(f.IO.Out, mergeJSON(res, out))
	}
	write(f, out.target(), res)
	writeImageOutput(f, out)
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

func writeImageOutput(f *factory.Factory, out *indexImageOutput) {
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
			fmt.Fprintf(w, "%s %s\n", t.NotePrefix(), warn)
		}
	}
}

func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12]
	}
	return d
}

// PullWithTool pulls the bundle images among args with docker or podman
// and saves each to an archive in a temporary directory, so that bundles
// come from the tool's storage and configuration. It returns, per argument,
// the archive to read. cleanup removes the archives.
func PullWithTool(ctx context.Context, f *factory.Factory, tool containertools.Tool, args []string, opts image.Options) (map[string]string, func(), error) {
	if tool == "" {
		return nil, func() {}, nil
	}
	r, err := containertools.Find(tool)
	if err != nil {
		return nil, func() {}, fmt.Errorf("--pull-tool: %w", err)
	}
	r.Stdout, r.Stderr = f.IO.ErrOut, f.IO.ErrOut
	dir, err := os.MkdirTemp("", "opm-pull-")
	if err != nil {
		return nil, func() {}, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	out := map[string]string{}
	for i, arg := range args {
		if local, _ := bundlesource.IsLocal(arg); local {
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

// Source opens an index argument: a database file as is, anything else
// as an index image whose database layer is fetched into a temporary
// directory. done closes it and removes the temporary files.
func Source(ctx context.Context, f *factory.Factory, arg string, opts image.Options) (db *index.DB, done func(), err error) {
	if st, err := os.Stat(arg); err == nil && !st.IsDir() || !image.LooksLikeReference(arg) {
		db, err := index.OpenReadOnly(arg)
		if err != nil {
			return nil, nil, err
		}
		return db, func() { _ = db.Close() }, nil
	}
	client, err := f.ImageClient(opts)
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
	if err := databaseFromConfigs(ctx, b, arg); err != nil {
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
func Change[R any](ctx context.Context, f *factory.Factory, o *ImageOptions, database, format string, words ChangeWords,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	if database != "" {
		if _, _, err := o.Check(database, f.Version().Version); err != nil {
			return err
		}
		return changeDatabase(ctx, f, database, format, words, change, write)
	}
	if o.FromIndex == "" {
		return exit.Usagef("--from-index is required: the index image to %s (or --database FILE)", words.Purpose)
	}
	if _, _, err := o.Check("", f.Version().Version); err != nil {
		return err
	}
	return ChangeImage(ctx, f, o, format, change, write)
}

// changeDatabase runs change on the database file path, in the library's
// one transaction, and renders its result: text on stderr, or JSON on
// stdout. A missing file is an error, not a new index.
func changeDatabase[R any](ctx context.Context, f *factory.Factory, path, format string, words ChangeWords,
	change func(*index.DB) (R, error), write func(*factory.Factory, string, R)) error {
	if !words.OpenErrors {
		if _, err := os.Stat(path); err != nil {
			return exit.With(exit.Failed, fmt.Errorf("%s %s: %w", words.Verb, path, err))
		}
	}
	db, err := index.OpenWith(path, index.OpenOptions{VerifiedLog: index.VerifiedLogIn(f.LookupEnv)})
	if err != nil {
		return exit.With(exit.Failed, err)
	}
	res, err := change(db)
	if cerr := db.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return exit.With(exit.Failed, fmt.Errorf("%s %s: %w", words.Verb, path, err))
	}
	if format == output.JSON {
		return output.WriteJSON(f.IO.Out, res)
	}
	write(f, path, res)
	return nil
}

// AddBuildFlags adds the image flags of upstream's index prune and
// prune-stranded: those of add and rm without --build-tool, --pull-tool and
// --enable-alpha, and -c defaulting to podman (see UpstreamContainerTool).
func (o *ImageOptions) AddBuildFlags(f *pflag.FlagSet) {
	f.StringVarP(&o.FromIndex, "from-index", "f", "", "index image to start from (only its database layer is fetched)")
	f.StringVarP(&o.Tag, "tag", "t", "", "where to write the index image: a registry reference, oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:NAME]")
	f.StringVarP(&o.BinaryImage, "binary-image", "i", "", "base image of the index when it is not --from-index's; also the FROM of --generate's Dockerfile (default: "+indeximage.ServingImageRepository+":<this opm's version>, opm's own serving image; a development build has none)")
	f.BoolVar(&o.Generate, "generate", false, "write database/index.db and the Dockerfile in the working directory instead of an image")
	f.StringVarP(&o.OutDockerfile, "out-dockerfile", "d", "", "name of the Dockerfile --generate writes (default "+indeximage.DefaultDockerfile+")")
	f.StringVarP(&o.ContainerTool, "container-tool", "c", "podman", "docker or podman to build the image with; not given, opm writes the image itself without a container tool")
	f.StringVar(&o.LayerCompression, "layer-compression", string(indeximage.Gzip), layerCompressionUsage)
	o.Image.AddFlags(f)
}

// UpstreamContainerTool applies upstream's -c default (podman) only when
// -c was given: without it opm works in-process. none is refused, as
// upstream refused it on prune.
func (o *ImageOptions) UpstreamContainerTool(given bool) error {
	if !given {
		o.ContainerTool = ""
		return nil
	}
	if o.ContainerTool == "none" {
		return exit.Usagef("--container-tool none: this command builds an image; use docker or podman, or drop -c to build without a container tool")
	}
	return nil
}
