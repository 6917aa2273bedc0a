package indeximage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/opmkit/opm/internal/image"
)

// Format is what an index image carries: a sqlite database, a file-based
// catalog directory, or both (rendered from the same database, in the
// same layer).
type Format string

// Formats of index images.
const (
	FormatSQLite Format = "sqlite"
	FormatFBC    Format = "fbc"
	FormatBoth   Format = "both"
)

// ParseFormat accepts sqlite, fbc or both.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatSQLite, FormatFBC, FormatBoth:
		return f, nil
	}
	return "", fmt.Errorf("unknown catalog format %q: use sqlite, fbc or both", s)
}

// HasDatabase reports whether images of this format carry the database.
func (f Format) HasDatabase() bool { return f == FormatSQLite || f == FormatBoth }

// HasConfigs reports whether images of this format carry the catalog directory.
func (f Format) HasConfigs() bool { return f == FormatFBC || f == FormatBoth }

// CachePath is where an FBC index image keeps the serve cache of its
// catalog directory (internal/fbccache: the converted database and the
// catalog's digest), built when opm writes the image. It is outside the
// catalog directory, whose every file the digest covers, and is only ever
// read: serving works on a read-only root file system as any user.
const CachePath = "/var/cache/opm"

// ServingImageSource is the org.opencontainers.image.source label of opm's
// serving image (internal/servingimage), inherited by images built on it:
// the mark that the image's opm reads opm's serve cache. Upstream's opm
// understands neither the cache nor its format, and would refuse to serve.
const ServingImageSource = "https://github.com/opmkit/opm"

// ServeCmd is the command that serves a file-based catalog directory from
// the cache in cachePath, refusing a cache that does not match the catalog
// (it cannot be rebuilt in a read-only image, and a mismatch means the
// image was changed by something other than opm).
// With cachePath "", it converts the catalog at start-up.
func ServeCmd(configsPath, cachePath string) []string {
	if cachePath == "" {
		return []string{"serve", configsPath}
	}
	return []string{"serve", configsPath, "--cache-dir=" + cachePath, "--cache-enforce-integrity"}
}

// ServesOpmCache reports whether every platform image of the base is
// opm's serving image (or built on it), whose opm serves opm's cache: an
// fbc image written on it carries the cache (SetServeCache).
func (b *Builder) ServesOpmCache() bool {
	if b.base == nil {
		return false
	}
	for _, im := range b.base.Images {
		if im.Labels()[sourceLabel] != ServingImageSource {
			return false
		}
	}
	return len(b.base.Images) > 0
}

// sourceLabel is the OCI annotation naming an image's source repository.
const sourceLabel = "org.opencontainers.image.source"

// SetServeCache gives the local serve cache (internal/fbccache) of the
// catalog directory passed to SetOutput, which Write puts at CachePath of
// an fbc image when ServesOpmCache. The caller builds it, so that this
// package stays apart from the catalog conversion.
func (b *Builder) SetServeCache(dir string) { b.serveCache = dir }

// SourceFormat is the format of the index image opened by FromIndex or
// FetchDatabase ("" before, or for a new index).
func (b *Builder) SourceFormat() Format { return b.srcFormat }

// SourceConfigs is the local copy of the catalog directory of an index
// image that carries no database (FormatFBC): the caller builds the
// database at DatabasePath from it. "" otherwise.
func (b *Builder) SourceConfigs() string { return b.srcConfigs }

// ConfigsPath is the catalog directory's path inside the image ("/configs").
func (b *Builder) ConfigsPath() string { return "/" + b.cfgPath }

// SetOutput says what Write puts in the image: format, and for a format
// with a catalog directory, configsDir, the local directory to copy to
// ConfigsPath.
func (b *Builder) SetOutput(format Format, configsDir string) {
	b.outFormat, b.outConfigs = format, configsDir
}

// outputFormat is the format Write writes.
func (b *Builder) outputFormat() Format {
	if b.outFormat != "" {
		return b.outFormat
	}
	return FormatSQLite
}

// labelPath cleans a path label's value ("" when it names nothing).
func labelPath(v string) string { return strings.Trim(path.Clean("/"+v), "/") }

// readConfigs copies the catalog directory b.cfgPath of im into a local
// directory (SourceConfigs). The whole image is flattened: the directory
// may be spread over several layers.
func (b *Builder) readConfigs(ctx context.Context, im *image.Image) error {
	fsys, err := im.FS(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = fsys.Close() }()
	if st, err := fs.Stat(fsys, b.cfgPath); err != nil || !st.IsDir() {
		return fmt.Errorf("%s: label %s=/%s, but the image has no such directory", im.Ref, ConfigsLabel, b.cfgPath)
	}
	sub, err := fs.Sub(fsys, b.cfgPath)
	if err != nil {
		return err
	}
	dst := b.dir + "/configs-in"
	if err := os.Mkdir(dst, 0o755); err != nil {
		return err
	}
	if err := image.ExtractTo(ctx, sub, dst); err != nil {
		return fmt.Errorf("read catalog /%s of %s: %w", b.cfgPath, im.Ref, err)
	}
	b.srcConfigs = dst
	return nil
}

// onlyCatalog reports whether the top layer of im holds nothing but what
// Write puts there (catalog directory, database, their parents and
// whiteouts), so that it is replaced rather than stacked upon.
func (b *Builder) onlyCatalog(ctx context.Context, im *image.Image) (bool, error) {
	layers := im.Layers()
	if len(layers) == 0 {
		return false, nil
	}
	top := len(layers) - 1
	lr, err := im.OpenLayer(ctx, top)
	if err != nil {
		return false, err
	}
	defer func() { _ = lr.Close() }()
	b.pulled.Add(layers[top].Size)
	tr := newTarReader(lr)
	only := true
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		hdr, err := tr.Next()
		if err != nil {
			break
		}
		p, err := entryPath(layers[top].Digest.String(), hdr.Name)
		if err != nil {
			return false, err
		}
		if !b.catalogEntry(p, hdr.Typeflag) {
			only = false
		}
	}
	return only, nil
}

// catalogEntry reports whether a layer entry is one Write writes.
func (b *Builder) catalogEntry(p string, typeflag byte) bool {
	under := func(dir string) bool { return dir != "" && (p == dir || strings.HasPrefix(p, dir+"/")) }
	for d := path.Dir(b.dbPath); d != "."; d = path.Dir(d) {
		if p == d && isDir(typeflag) {
			return true
		}
	}
	for d := path.Dir(b.cfgPath); d != "."; d = path.Dir(d) {
		if p == d && isDir(typeflag) {
			return true
		}
	}
	cache := strings.TrimPrefix(CachePath, "/")
	for d := path.Dir(cache); d != "."; d = path.Dir(d) {
		if p == d && isDir(typeflag) {
			return true
		}
	}
	switch {
	case p == "" && isDir(typeflag):
		return true
	case p == b.dbPath && isRegular(typeflag):
		return true
	case p == path.Join(path.Dir(b.dbPath), ".wh."+path.Base(b.dbPath)):
		return true
	case p == path.Join(path.Dir(b.cfgPath), ".wh."+path.Base(b.cfgPath)):
		return true
	case under(b.cfgPath):
		return true
	case p == path.Join(path.Dir(cache), ".wh."+path.Base(cache)):
		return true
	case under(cache):
		return true
	}
	return false
}
