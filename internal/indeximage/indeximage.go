// Package indeximage builds sqlite index images without a container daemon:
// it reads an existing index image's database from the one layer that holds
// it, and writes the updated database as one new layer on top of the same
// base layers, for every platform of a multi-arch image.
//
// It knows nothing of bundles or sqlite: callers change the database file at
// Builder.DatabasePath with internal/index between FromIndex (or Base) and Write.
package indeximage

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/layerfs"
)

// Facts of the index image format (../shared/FORMATS.md, "Index image").
const (
	// DatabaseLabel names the database path inside an index image.
	DatabaseLabel = "operators.operatorframework.io.index.database.v1"
	// ConfigsLabel names the file-based catalog directory inside an index
	// image (upstream's current format, served with `opm serve`).
	ConfigsLabel = "operators.operatorframework.io.index.configs.v1"
	// DefaultConfigsPath is where index images keep the file-based catalog.
	DefaultConfigsPath = "/configs"
	// DefaultDatabasePath is where new index images keep the database.
	DefaultDatabasePath = "/database/index.db"
	// Port is the gRPC port `opm registry serve` listens on.
	Port = "50051"
	// LayerComment marks, in the image history, the layers opm writes that
	// hold nothing but the database.
	LayerComment = "opm index database layer"
)

// Entrypoint and Cmd of new index images.
var (
	Entrypoint = []string{"/bin/opm"}
)

// Cmd is the command that serves the database at dbPath.
func Cmd(dbPath string) []string {
	return []string{"registry", "serve", "--database", dbPath}
}

// Builder holds one index image update: the base image(s), a private
// temporary directory with the database, and what was moved.
type Builder struct {
	// Compression is the database layer's compression (gzip when empty).
	Compression Compression
	// Cache, when set, is the directory of the database cache (see
	// CacheIn): FromIndex takes the database from it when it holds the
	// image's database layer, and Write leaves the new database there
	// (DatabasePath is gone once Write has succeeded).
	Cache string
	// fromCache says the database came from the cache.
	fromCache bool

	c   *image.Client
	dir string
	db  string

	base      *image.ImageSet
	fromIndex bool
	// dbPath is the database path inside the image, without the leading slash.
	dbPath string
	// drop[i] is 1 when image i's top layer holds nothing but the database
	// and is replaced rather than stacked upon.
	drop []int

	// cfgPath is the catalog directory inside the image, without the
	// leading slash.
	cfgPath string
	// srcFormat is what the base index image carries; srcConfigs the
	// local copy of its catalog directory when it has no database.
	srcFormat  Format
	srcConfigs string
	// outFormat and outConfigs are what Write writes (SetOutput).
	outFormat  Format
	outConfigs string
	// sumDB says to hash the database as it is fetched.
	sumDB bool
	// keepLayer says to keep the database layer fetched next as prev, for
	// Write to copy its unchanged blocks.
	keepLayer bool
	prev      *previousLayer
	// blocksReused and blocksCompressed are the last Write's gzip blocks.
	blocksReused, blocksCompressed int
	// serveCache is the local serve cache of outConfigs (SetServeCache).
	serveCache string
	// uploadErr is why the last Write's early upload of its layer failed
	// (the push then sent the layer from its file).
	uploadErr error
	streamed  bool

	pulled   atomic.Int64
	pushed   atomic.Int64
	warnings []string
}

// New makes a builder whose temporary files live in a new directory under
// tempDir ("" is os.TempDir()). Close removes it.
func New(c *image.Client, tempDir string) (*Builder, error) {
	dir, err := os.MkdirTemp(tempDir, "opm-index-")
	if err != nil {
		return nil, fmt.Errorf("temporary directory: %w", err)
	}
	return &Builder{c: c, dir: dir, db: dir + "/index.db", dbPath: strings.TrimPrefix(DefaultDatabasePath, "/"), cfgPath: strings.TrimPrefix(DefaultConfigsPath, "/")}, nil
}

// DatabasePath is the local database file: fetched by FromIndex, to be
// created by the caller otherwise.
func (b *Builder) DatabasePath() string { return b.db }

// Dir is the builder's private temporary directory.
func (b *Builder) Dir() string { return b.dir }

// ImagePath is the database path inside the image ("/database/index.db").
func (b *Builder) ImagePath() string { return "/" + b.dbPath }

// Close releases the base images and removes every temporary file.
func (b *Builder) Close() error {
	err := b.base.Close()
	if rerr := os.RemoveAll(b.dir); err == nil {
		err = rerr
	}
	return err
}

// Warnings are things the caller should tell the user (dropped attestations, ...).
func (b *Builder) Warnings() []string { return b.warnings }

// Pulled is the number of bytes read from the base so far: manifests,
// configs and the layers opened.
func (b *Builder) Pulled() int64 { return b.pulled.Load() }

// Pushed is how many bytes Write has sent so far (for a progress display).
func (b *Builder) Pushed() int64 { return b.pushed.Load() }

// FromIndex opens ref (every platform of a multi-arch image), reads the
// database path from its label and fetches the database, from the top-most
// layer that holds it, into DatabasePath. Layers below are never read.
func (b *Builder) FromIndex(ctx context.Context, ref string) error {
	set, err := b.open(ctx, ref)
	if err != nil {
		return err
	}
	b.base, b.fromIndex = set, true
	p := set.Preferred()
	labels := set.Images[p].Labels()
	label := labels[DatabaseLabel]
	b.srcFormat = FormatSQLite
	if c := labelPath(labels[ConfigsLabel]); c != "" {
		b.cfgPath = c
		b.srcFormat = FormatBoth
		if label == "" {
			return b.fromCatalogIndex(ctx, ref)
		}
	}
	if label == "" {
		return fmt.Errorf("%s is not an index image: its config has neither a %s nor a %s label", ref, DatabaseLabel, ConfigsLabel)
	}
	b.dbPath = strings.Trim(path.Clean("/"+label), "/")
	if b.dbPath == "" {
		return fmt.Errorf("%s: label %s=%q names no file", ref, DatabaseLabel, label)
	}
	b.drop = make([]int, len(set.Images))
	// The database's digest is only needed to compare the platforms'.
	b.sumDB = len(set.Images) > 1
	if len(set.Images) == 1 {
		if f, ok := b.takeFromCache(set.Images[p]); ok {
			b.drop[p] = f.drop()
			return nil
		}
	}
	b.keepLayer = true
	first, err := b.fetch(ctx, set.Images[p], b.db)
	b.keepLayer = false
	if err != nil {
		return err
	}
	b.drop[p] = first.drop()
	for i, im := range set.Images {
		if i == p {
			continue
		}
		if l := im.Labels()[DatabaseLabel]; strings.Trim(path.Clean("/"+l), "/") != b.dbPath {
			return fmt.Errorf("%s: platform %s keeps the database at %q, platform %s at %q; opm updates one database for all platforms",
				ref, set.Platform(i), l, set.Platform(p), label)
		}
		layers := im.Layers()
		if first.top && layers[len(layers)-1].Digest == first.digest {
			// The same blob as the database layer already read.
			b.drop[i] = b.drop[p]
			continue
		}
		other, err := b.fetch(ctx, im, b.dir+"/other.db")
		os.Remove(b.dir + "/other.db")
		if err != nil {
			return err
		}
		if other.sum != first.sum {
			return fmt.Errorf("%s: platform %s holds a different database than platform %s; opm updates one database for all platforms (build the list from one database)",
				ref, set.Platform(i), set.Platform(p))
		}
		b.drop[i] = other.drop()
	}
	return nil
}

// fromCatalogIndex reads an index image that carries a file-based catalog
// and no database (upstream's current format): its catalog directory is
// copied to SourceConfigs for the caller to build the database from. Each
// platform image must name the same directory; their content is taken from
// the preferred platform.
func (b *Builder) fromCatalogIndex(ctx context.Context, ref string) error {
	set := b.base
	p := set.Preferred()
	b.srcFormat = FormatFBC
	b.drop = make([]int, len(set.Images))
	for i, im := range set.Images {
		if c := labelPath(im.Labels()[ConfigsLabel]); c != b.cfgPath {
			return fmt.Errorf("%s: platform %s keeps the catalog at %q, platform %s at %q; opm updates one catalog for all platforms",
				ref, set.Platform(i), c, set.Platform(p), b.cfgPath)
		}
		// A top layer holding only the catalog (an image opm wrote) is
		// replaced; anything else (upstream's images cache the catalog
		// in a layer of their own) stays, below a layer that hides the
		// old catalog directory.
		only, err := b.onlyCatalog(ctx, im)
		if err != nil {
			return err
		}
		if only {
			b.drop[i] = 1
		}
	}
	return b.readConfigs(ctx, set.Images[p])
}

// Base opens ref, the image that serves the database (--binary-image), as
// the base of a new index image.
func (b *Builder) Base(ctx context.Context, ref string) error {
	set, err := b.open(ctx, ref)
	if err != nil {
		return err
	}
	b.base, b.fromIndex = set, false
	b.drop = make([]int, len(set.Images))
	return nil
}

func (b *Builder) open(ctx context.Context, ref string) (*image.ImageSet, error) {
	r, err := image.ParseReference(ref)
	if err != nil {
		return nil, err
	}
	set, err := b.c.OpenAll(ctx, r)
	if err != nil {
		return nil, err
	}
	for _, im := range set.Images {
		b.pulled.Add(int64(len(im.RawManifest) + len(im.RawConfig)))
	}
	if set.List != nil {
		b.pulled.Add(set.Descriptors[0].Size) // about the list's size; its bytes are not kept
		for _, d := range set.Skipped {
			b.warnings = append(b.warnings, fmt.Sprintf("%s: list entry %s (%s) is not a platform image (an attestation or signature of the old images) and is not carried over", ref, d.Digest, d.MediaType))
		}
	}
	return set, nil
}

// found says where a database was.
type found struct {
	top    bool    // in the top layer
	onlyDB bool    // that layer holds nothing but the database and its parent directories
	digest v1.Hash // that layer's digest (when top)
	sum    [32]byte
}

func (f found) drop() int {
	if f.top && f.onlyDB {
		return 1
	}
	return 0
}

// fetch writes the database of im to dst. It reads the top layer itself
// (the usual place of the database, so one fetch tells both where it is and
// whether the layer holds anything else); otherwise it walks down with FindFile.
func (b *Builder) fetch(ctx context.Context, im *image.Image, dst string) (found, error) {
	layers := im.Layers()
	if len(layers) == 0 {
		return found{}, fmt.Errorf("%s: the image has no layers, so no database at /%s", im.Ref, b.dbPath)
	}
	top := len(layers) - 1
	f, ok, err := b.scanTop(ctx, im, top, dst)
	if err != nil {
		return found{}, fmt.Errorf("read database /%s of %s: %w", b.dbPath, im.Ref, err)
	}
	if ok {
		return f, nil
	}
	data, idx, err := im.FindDatabase(ctx, b.dbPath)
	if idx < 0 {
		for _, l := range layers {
			b.pulled.Add(l.Size)
		}
	} else {
		for _, l := range layers[idx:] {
			b.pulled.Add(l.Size)
		}
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return found{}, fmt.Errorf("%s: no database at /%s (label %s): %w", im.Ref, b.dbPath, DatabaseLabel, err)
		}
		return found{}, err
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		return found{}, err
	}
	return found{sum: sha256.Sum256(data)}, nil
}

// scanTop looks for the database in the top layer, streaming it to dst.
func (b *Builder) scanTop(ctx context.Context, im *image.Image, top int, dst string) (found, bool, error) {
	desc := im.Layers()[top]
	// The compressed digest pins the database's bytes; hashing hundreds of
	// MB again for the diff_id would only check the old config.
	opts := layerfs.ReaderOptions{NoDiffID: true}
	var keep *os.File
	var blockKey *sumKey
	if b.keepLayer && b.Compression != Zstd {
		// The layer is read anyway: keep its compressed bytes, and where
		// each gzip member is, in case opm wrote it and Write can copy
		// the blocks the change leaves as they were.
		var err error
		if keep, err = os.Create(b.dir + "/previous.layer"); err != nil {
			return found{}, false, err
		}
		defer keep.Close()
		if blockKey, err = newSumKey(); err != nil {
			return found{}, false, err
		}
		opts = layerfs.ReaderOptions{NoDiffID: true, Members: true, Sum: blockKey.sum, Copy: keep}
	}
	lr, err := im.OpenDatabaseLayerWith(ctx, top, opts)
	if err != nil {
		return found{}, false, err
	}
	defer func() { _ = lr.Close() }()
	b.pulled.Add(desc.Size)
	parents := map[string]bool{}
	for d := path.Dir(b.dbPath); d != "."; d = path.Dir(d) {
		parents[d] = true
	}
	res := found{top: true, onlyDB: true, digest: desc.Digest}
	got := false
	tr := newTarReader(lr)
	for {
		if err := ctx.Err(); err != nil {
			return found{}, false, err
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return found{}, false, fmt.Errorf("layer %s: bad tar stream: %w", desc.Digest, err)
		}
		p, err := entryPath(desc.Digest.String(), hdr.Name)
		if err != nil {
			return found{}, false, err
		}
		switch {
		case p == b.dbPath && isRegular(hdr.Typeflag):
			r := io.LimitReader(tr, hdr.Size)
			h := sha256.New()
			if b.sumDB {
				r = io.TeeReader(r, h)
			}
			if err := writeFile(dst, r, hdr.Size); err != nil {
				return found{}, false, fmt.Errorf("layer %s: %s: %w", desc.Digest, hdr.Name, err)
			}
			copy(res.sum[:], h.Sum(nil))
			got = true
		case (p == "" || parents[p]) && isDir(hdr.Typeflag):
		case b.catalogEntry(p, hdr.Typeflag):
			// The catalog directory opm writes beside the database.
		default:
			// Anything else (other files, whiteouts, links, the database as
			// a link) makes this not a database-only layer; a database that
			// is not a regular file here is left to FindFile.
			res.onlyDB = false
		}
	}
	if err := lr.Verify(); err != nil {
		return found{}, false, err
	}
	if keep != nil {
		if members := lr.Members(); got && reusable(members) {
			b.prev = &previousLayer{file: keep.Name(), members: members, key: blockKey}
		} else {
			os.Remove(keep.Name())
		}
	}
	if !got {
		os.Remove(dst)
		return found{}, false, nil
	}
	return res, true, nil
}

func writeFile(dst string, r io.Reader, size int64) error {
	f, err := os.OpenFile(dst, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	// Large writes: the database is hundreds of MB.
	n, err := io.CopyBuffer(struct{ io.Writer }{f}, r, make([]byte, 1<<20))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = fmt.Errorf("truncated: %d of %d bytes", n, size)
	}
	return err
}

// Result says what Write wrote.
type Result struct {
	// Reference is the destination as given.
	Reference string `json:"reference"`
	// Digest is the manifest digest (of the list, for a multi-arch image).
	Digest    string          `json:"digest"`
	MediaType types.MediaType `json:"mediaType"`
	// Platforms are the images written, one per platform.
	Platforms []PlatformResult `json:"platforms"`
	// CatalogFormat is what the image carries: sqlite, fbc or both.
	CatalogFormat Format `json:"catalogFormat"`
	// DatabaseLayer is the new layer's digest (the layer holding the
	// database and the catalog directory), the same in every platform image.
	DatabaseLayer     string `json:"databaseLayer"`
	DatabaseLayerSize int64  `json:"databaseLayerSize"`
	DatabasePath      string `json:"databasePath,omitempty"`
	ConfigsPath       string `json:"configsPath,omitempty"`
	// CachePath is where an FBC image keeps its serve cache.
	CachePath string `json:"cachePath,omitempty"`
	// ReplacedLayers counts platform images whose old database layer was
	// replaced instead of stacked upon.
	ReplacedLayers int `json:"replacedLayers"`
	// BytesPulled and BytesPushed are the bytes read from the base and
	// sent to the destination (blobs the destination had, or mounted, are
	// not sent).
	BytesPulled int64    `json:"bytesPulled"`
	BytesPushed int64    `json:"bytesPushed"`
	Warnings    []string `json:"warnings,omitempty"`
}

// PlatformResult is one platform image written.
type PlatformResult struct {
	Platform string `json:"platform"`
	Digest   string `json:"digest"`
	Layers   int    `json:"layers"`
}

// Write builds one layer holding the database file and writes, to dst, the
// base image(s) with that layer on top (replacing a top layer that holds
// nothing but an older database), the database label set and, for a new
// index, the entrypoint, command and exposed port of FORMATS.md.
func (b *Builder) Write(ctx context.Context, dst string) (*Result, error) {
	if b.base == nil {
		return nil, errors.New("index image: no base image opened")
	}
	dstRef, err := image.ParseReference(dst)
	if err != nil {
		return nil, err
	}
	format := b.outputFormat()
	spec := layerSpec{dbPath: b.dbPath, cfgPath: b.cfgPath}
	if format.HasDatabase() {
		if _, err := os.Stat(b.db); err != nil {
			return nil, fmt.Errorf("index image: database: %w", err)
		}
		spec.db = b.db
	} else if b.srcFormat.HasDatabase() {
		spec.whiteouts = append(spec.whiteouts, b.dbPath) // an older layer may hold it
	}
	if format.HasConfigs() {
		if b.outConfigs == "" {
			return nil, errors.New("index image: no catalog directory to write (SetOutput)")
		}
		spec.configs = b.outConfigs
	} else if b.srcFormat.HasConfigs() {
		spec.whiteouts = append(spec.whiteouts, b.cfgPath)
	}
	withCache := format == FormatFBC && b.ServesOpmCache()
	if format == FormatFBC && !withCache {
		b.warnings = append(b.warnings, fmt.Sprintf("the base image is not opm's serving image (no label %s=%s): the fbc image carries no serve cache and converts its catalog at every start (`serve /%s`)", sourceLabel, ServingImageSource, b.cfgPath))
	}
	if withCache {
		if b.serveCache == "" {
			return nil, errors.New("index image: no serve cache of the catalog to write (SetServeCache)")
		}
		// The serve cache goes into the same layer, so that the image's
		// catalog and its cache are always replaced together.
		spec.cache, spec.cachePath = b.serveCache, strings.TrimPrefix(CachePath, "/")
	} else if b.srcFormat == FormatFBC {
		spec.whiteouts = append(spec.whiteouts, strings.TrimPrefix(CachePath, "/"))
	}
	// A registry gets the layer as it is made (see layerUpload).
	var up *layerUpload
	var tee io.Writer
	if dstRef.Transport == image.TransportRegistry {
		up = b.startUpload(ctx, dstRef)
		tee = up
	}
	layer, err := buildLayer(spec, b.dir+"/layer", b.Compression, b.prev, tee, b.cacheKey(spec))
	b.streamed, b.uploadErr = false, nil
	if up != nil {
		b.uploadErr = up.finish(layer, err)
		b.streamed = b.uploadErr == nil
	}
	if err != nil {
		return nil, fmt.Errorf("build catalog layer: %w", err)
	}
	b.blocksReused, b.blocksCompressed = layer.reused, layer.compressed
	res := &Result{Reference: dst, CatalogFormat: format, DatabaseLayer: layer.digest.String(), DatabaseLayerSize: layer.size}
	var copied []string
	if format.HasDatabase() {
		res.DatabasePath = "/" + b.dbPath
		copied = append(copied, "database "+res.DatabasePath)
	}
	if format.HasConfigs() {
		res.ConfigsPath = "/" + b.cfgPath
		copied = append(copied, "catalog "+res.ConfigsPath)
	}
	if spec.cache != "" {
		res.CachePath = CachePath
		copied = append(copied, "serve cache "+CachePath)
	}
	hist := v1.History{Created: v1.Time{Time: image.Epoch}, CreatedBy: "opm index: COPY " + strings.Join(copied, ", "), Comment: LayerComment}
	imagePath := "/" + b.dbPath
	// A new index, or one whose format changes, gets the command that
	// serves what it carries; an FBC index always does, since a cache
	// an older command names would no longer match the catalog.
	setCmd := !b.fromIndex || format != b.srcFormat || format == FormatFBC
	edit := func(cf *v1.ConfigFile) {
		if cf.Config.Labels == nil {
			cf.Config.Labels = map[string]string{}
		}
		if format.HasDatabase() {
			cf.Config.Labels[DatabaseLabel] = imagePath
		} else {
			delete(cf.Config.Labels, DatabaseLabel)
		}
		if format.HasConfigs() {
			cf.Config.Labels[ConfigsLabel] = "/" + b.cfgPath
		} else {
			delete(cf.Config.Labels, ConfigsLabel)
		}
		if setCmd {
			cf.Config.Entrypoint = Entrypoint
			cf.Config.Cmd = Cmd(imagePath)
			if format == FormatFBC {
				cf.Config.Cmd = ServeCmd("/"+b.cfgPath, "")
				if withCache {
					cf.Config.Cmd = ServeCmd("/"+b.cfgPath, CachePath)
				}
			}
			if cf.Config.ExposedPorts == nil {
				cf.Config.ExposedPorts = map[string]struct{}{}
			}
			cf.Config.ExposedPorts[Port+"/tcp"] = struct{}{}
		}
	}
	var entries []image.ListEntry
	var out v1.Image
	for i, im := range b.base.Images {
		dl, err := layer.forManifest(im.MediaType)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", b.base.Platform(i), err)
		}
		l := &countingLayer{Layer: dl, n: &b.pushed}
		base := &countedImage{Image: im.V1Image(ctx), pulled: &b.pulled, pushed: &b.pushed}
		img, err := image.ReplaceTop(base, b.drop[i], l, hist, edit)
		if err != nil {
			return nil, err
		}
		d, err := img.Digest()
		if err != nil {
			return nil, err
		}
		n, _ := img.Manifest()
		res.Platforms = append(res.Platforms, PlatformResult{Platform: b.base.Platform(i).String(), Digest: d.String(), Layers: len(n.Layers)})
		res.ReplacedLayers += b.drop[i]
		raw, _ := img.RawManifest()
		cfg, _ := img.RawConfigFile()
		b.pushed.Add(int64(len(raw) + len(cfg)))
		desc := b.base.Descriptors[i]
		entries = append(entries, image.ListEntry{Image: img, Platform: desc.Platform, Annotations: desc.Annotations})
		out = img
	}
	var digest v1.Hash
	if b.base.List == nil {
		res.MediaType, _ = out.MediaType()
		digest, err = b.c.Write(ctx, out, dstRef)
	} else {
		var list v1.ImageIndex
		list, err = image.NewList(b.base.ListMediaType, b.base.List.Annotations, entries...)
		if err != nil {
			return nil, err
		}
		res.MediaType = b.base.ListMediaType
		raw, _ := list.RawManifest()
		b.pushed.Add(int64(len(raw)))
		digest, err = b.c.WriteList(ctx, list, dstRef)
	}
	if err != nil {
		return nil, err
	}
	res.Digest = digest.String()
	b.toCache(layer, spec)
	res.BytesPulled, res.BytesPushed = b.pulled.Load(), b.pushed.Load()
	res.Warnings = b.warnings
	return res, nil
}

// countedImage counts the bytes of base layers read while writing: a layer
// the destination lacks and cannot mount is read from the base (pulled) and
// sent (pushed).
type countedImage struct {
	v1.Image
	pulled, pushed *atomic.Int64
}

func (c *countedImage) Layers() ([]v1.Layer, error) {
	ls, err := c.Image.Layers()
	if err != nil {
		return nil, err
	}
	out := make([]v1.Layer, len(ls))
	for i, l := range ls {
		if ml, ok := l.(*remote.MountableLayer); ok {
			out[i] = &remote.MountableLayer{Layer: &countingLayer{Layer: ml.Layer, n: c.pushed, also: c.pulled}, Reference: ml.Reference}
			continue
		}
		out[i] = &countingLayer{Layer: l, n: c.pushed, also: c.pulled}
	}
	return out, nil
}

// countingLayer counts the compressed bytes read from a layer.
type countingLayer struct {
	v1.Layer
	n, also *atomic.Int64
}

func (l *countingLayer) Compressed() (io.ReadCloser, error) {
	rc, err := l.Layer.Compressed()
	if err != nil {
		return nil, err
	}
	return &countingReader{ReadCloser: rc, n: l.n, also: l.also}, nil
}

type countingReader struct {
	io.ReadCloser
	n, also *atomic.Int64
}

func (r *countingReader) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	r.n.Add(int64(n))
	if r.also != nil {
		r.also.Add(int64(n))
	}
	return n, err
}

// FetchDatabase opens ref (for a multi-arch image, the --platform image) and
// fetches only its database into DatabasePath, for reading (inspect, export).
func (b *Builder) FetchDatabase(ctx context.Context, ref string) error {
	r, err := image.ParseReference(ref)
	if err != nil {
		return err
	}
	im, err := b.c.Open(ctx, r)
	if err != nil {
		return err
	}
	defer func() { _ = im.Close() }()
	b.pulled.Add(int64(len(im.RawManifest) + len(im.RawConfig)))
	label := im.Labels()[DatabaseLabel]
	b.srcFormat = FormatSQLite
	if c := labelPath(im.Labels()[ConfigsLabel]); c != "" {
		b.cfgPath = c
		b.srcFormat = FormatBoth
		if label == "" {
			b.srcFormat = FormatFBC
			return b.readConfigs(ctx, im)
		}
	}
	if label == "" {
		return fmt.Errorf("%s is not an index image: its config has neither a %s nor a %s label", ref, DatabaseLabel, ConfigsLabel)
	}
	b.dbPath = strings.Trim(path.Clean("/"+label), "/")
	if b.dbPath == "" {
		return fmt.Errorf("%s: label %s=%q names no file", ref, DatabaseLabel, label)
	}
	_, err = b.fetch(ctx, im, b.db)
	return err
}
