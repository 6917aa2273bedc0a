package indeximage

import (
	"archive/tar"
	"crypto/sha256"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/layerfs"
)

// Compression is how the database layer is compressed.
type Compression string

// The layer compressions. Gzip is what every runtime reads. Zstd is much
// faster to write and read, and smaller, but only newer runtimes read it:
// containerd 1.5 and later, and CRI-O, podman and skopeo through
// containers/image; it needs an OCI image (Docker's schema 2 has no zstd
// media type).
const (
	Gzip Compression = "gzip"
	Zstd Compression = "zstd"
)

// ParseCompression reads a --layer-compression value ("" is gzip).
func ParseCompression(s string) (Compression, error) {
	switch Compression(s) {
	case "", Gzip:
		return Gzip, nil
	case Zstd:
		return Zstd, nil
	}
	return "", fmt.Errorf("unknown layer compression %q: use gzip (every runtime) or zstd (containerd 1.5+, CRI-O)", s)
}

// dbLayer is the database layer, kept compressed in a temporary file.
type dbLayer struct {
	file           string
	digest, diffID v1.Hash
	size           int64
	mediaType      types.MediaType
	compression    Compression
	// reused and compressed count the gzip blocks copied from the
	// previous layer and those compressed.
	reused, compressed int
	// sums are the blocks' sums under key, when buildLayer was given one.
	sums []uint64
	key  *sumKey
}

// forManifest gives the layer the media type that goes with the manifest
// type of the image it is added to.
func (l *dbLayer) forManifest(manifest types.MediaType) (*dbLayer, error) {
	c := *l
	docker := manifest == types.DockerManifestSchema2
	switch {
	case l.compression == Zstd && docker:
		return nil, fmt.Errorf("a zstd layer needs an OCI image, and the base is a Docker schema 2 image; use --layer-compression gzip")
	case l.compression == Zstd:
		c.mediaType = types.OCILayerZStd
	case docker:
		c.mediaType = types.DockerLayer
	default:
		c.mediaType = types.OCILayer
	}
	return &c, nil
}

func (l *dbLayer) Digest() (v1.Hash, error)            { return l.digest, nil }
func (l *dbLayer) DiffID() (v1.Hash, error)            { return l.diffID, nil }
func (l *dbLayer) Size() (int64, error)                { return l.size, nil }
func (l *dbLayer) MediaType() (types.MediaType, error) { return l.mediaType, nil }
func (l *dbLayer) Compressed() (io.ReadCloser, error)  { return os.Open(l.file) }
func (l *dbLayer) Uncompressed() (io.ReadCloser, error) {
	f, err := os.Open(l.file)
	if err != nil {
		return nil, err
	}
	if l.compression == Zstd {
		zr, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1))
		if err != nil {
			f.Close()
			return nil, err
		}
		return &zstdFile{Decoder: zr, f: f}, nil
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &gzipFile{Reader: zr, f: f}, nil
}

type gzipFile struct {
	*gzip.Reader
	f *os.File
}

func (g *gzipFile) Close() error {
	_ = g.Reader.Close()
	return g.f.Close()
}

type zstdFile struct {
	*zstd.Decoder
	f *os.File
}

func (z *zstdFile) Close() error {
	z.Decoder.Close()
	return z.f.Close()
}

// layerSpec is what the catalog layer holds.
type layerSpec struct {
	// db, when not "", is the database file to put at dbPath.
	db, dbPath string
	// configs, when not "", is the local catalog directory to put at
	// cfgPath, which the layer makes opaque (hiding any older catalog
	// below it).
	configs, cfgPath string
	// cache, when not "", is the local serve cache directory of configs
	// (fbccache) to put at cachePath, opaque as well.
	cache, cachePath string
	// whiteouts are paths the layer deletes from the layers below.
	whiteouts []string
}

// buildLayer writes a deterministic layer to out, compressed as comp,
// holding the database file and the catalog directory of spec (and their
// parent directories): uid/gid 0, modes 0755/0644, timestamps at the Unix
// epoch, a gzip header without name or time, entries in a fixed order. The
// same content and compression always give the same digest. The compressed
// bytes also go to tee, when not nil, as they are written; a gzip layer
// records its blocks' sums under keep, when not nil.
func buildLayer(spec layerSpec, out string, comp Compression, prev *previousLayer, tee io.Writer, keep *sumKey) (*dbLayer, error) {
	f, err := os.OpenFile(out, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var dst io.Writer = f
	if tee != nil {
		dst = io.MultiWriter(f, tee)
	}
	compressed := &hashWriter{h: sha256.New(), w: dst}
	diffID := sha256.New()
	zw, err := newCompressor(compressed, comp, prev, diffID, keep)
	if err != nil {
		return nil, err
	}
	if err := writeTar(zw, spec); err != nil {
		_ = zw.Close()
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	l := &dbLayer{
		file:        out,
		digest:      v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", compressed.h.Sum(nil))},
		diffID:      v1.Hash{Algorithm: "sha256", Hex: fmt.Sprintf("%x", diffID.Sum(nil))},
		size:        compressed.n,
		mediaType:   types.OCILayer,
		compression: comp,
	}
	if bw, ok := zw.(*blockWriter); ok {
		l.reused, l.compressed = bw.Reused, bw.Compressed
		if keep != nil {
			l.sums, l.key = bw.Sums, keep
		}
	}
	return l, nil
}

// writeTar writes the layer's tar stream of spec to w: the same spec
// always gives the same bytes.
func writeTar(w io.Writer, spec layerSpec) error {
	tw := tar.NewWriter(w)
	written := map[string]bool{}
	dir := func(d string) error {
		if written[d] {
			return nil
		}
		written[d] = true
		return tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, ModTime: image.Epoch, Format: tar.FormatPAX})
	}
	parents := func(p string) error {
		var dirs []string
		for d := path.Dir(p); d != "."; d = path.Dir(d) {
			dirs = append([]string{d}, dirs...)
		}
		for _, d := range dirs {
			if err := dir(d); err != nil {
				return err
			}
		}
		return nil
	}
	empty := func(name string) error {
		if err := parents(name); err != nil {
			return err
		}
		return tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, ModTime: image.Epoch, Format: tar.FormatPAX})
	}
	for _, w := range spec.whiteouts {
		if err := empty(path.Join(path.Dir(w), layerfs.WhiteoutPrefix+path.Base(w))); err != nil {
			return err
		}
	}
	if spec.db != "" {
		if err := parents(spec.dbPath); err != nil {
			return err
		}
		if err := addFile(tw, spec.db, spec.dbPath); err != nil {
			return err
		}
	}
	// tree copies the local directory local into the layer as the opaque
	// directory name (hiding whatever older layers hold there).
	tree := func(local, name string) error {
		if err := parents(name); err != nil {
			return err
		}
		if err := dir(name); err != nil {
			return err
		}
		if err := empty(name + "/" + layerfs.WhiteoutOpaque); err != nil {
			return err
		}
		// WalkDir visits in lexical order: a fixed order for the digest.
		return fs.WalkDir(os.DirFS(local), ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == "." {
				return err
			}
			entry := name + "/" + p
			switch {
			case d.IsDir():
				return dir(entry)
			case d.Type().IsRegular():
				return addFile(tw, filepath.Join(local, filepath.FromSlash(p)), entry)
			}
			return fmt.Errorf("directory %s: %s is neither a file nor a directory", local, p)
		})
	}
	if spec.configs != "" {
		if err := tree(spec.configs, spec.cfgPath); err != nil {
			return err
		}
	}
	if spec.cache != "" {
		if err := tree(spec.cache, spec.cachePath); err != nil {
			return err
		}
	}
	return tw.Close()
}

// newCompressor is the layer's compressor, which also hashes what it is
// given into diffID; both kinds give the same bytes whatever the number of
// cores. A gzip layer copies the blocks that prev, opm's previous layer of
// the same image, holds unchanged.
func newCompressor(w io.Writer, comp Compression, prev *previousLayer, diffID hash.Hash, keep *sumKey) (io.WriteCloser, error) {
	if comp == Zstd {
		// One encoder goroutine: the output then cannot depend on
		// scheduling, and zstd is fast enough alone.
		zw, err := zstd.NewWriter(w, zstd.WithEncoderLevel(zstd.SpeedDefault), zstd.WithEncoderConcurrency(1))
		if err != nil {
			return nil, err
		}
		return hashedWriteCloser{Writer: io.MultiWriter(diffID, zw), Closer: zw}, nil
	}
	return newBlockWriter(w, prev, diffID, keep)
}

type hashedWriteCloser struct {
	io.Writer
	io.Closer
}

// addFile copies the local file src into the layer as name.
func addFile(tw *tar.Writer, src, name string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Mode: 0o644, Size: st.Size(), ModTime: image.Epoch, Format: tar.FormatPAX}); err != nil {
		return err
	}
	if n, err := io.Copy(tw, in); err != nil {
		return err
	} else if n != st.Size() {
		return fmt.Errorf("%s changed while being read", src)
	}
	return nil
}

type hashWriter struct {
	h hash.Hash
	w io.Writer
	n int64
}

func (w *hashWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

func newTarReader(r io.Reader) *tar.Reader { return tar.NewReader(r) }

// entryPath cleans a tar entry name, refusing hostile ones as layerfs does.
func entryPath(layer, name string) (string, error) {
	comps, err := layerfs.EntryPath(layer, name, name)
	if err != nil {
		return "", err
	}
	return strings.Join(comps, "/"), nil
}

func isRegular(t byte) bool { return t == tar.TypeReg || t == tar.TypeGNUSparse }
func isDir(t byte) bool     { return t == tar.TypeDir }
