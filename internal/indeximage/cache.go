package indeximage

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/opmkit/opm/internal/atomicfile"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/image/blockgzip"
	"github.com/opmkit/opm/internal/image/layerfs"
)

// A database cache keeps, on this machine, the database of the last index
// image opm wrote, with the compressed layer that holds it, under that
// layer's digest. The next change of that image finds its database layer
// there: nothing is downloaded or decompressed, and the unchanged blocks
// are copied from the kept layer as they would be from a downloaded one.
// Adding one bundle to a 5,000-bundle index then costs the blocks it
// changes, the layer's hashes and the push, not a read of the whole
// database. The entry is taken (moved, not copied) by the change that uses
// it; only the newest entry is kept.

// CacheIn is where commands keep the database cache, given the
// environment: $XDG_CACHE_HOME/opm/index-databases, else
// ~/.cache/opm/index-databases ("" when neither is known: no cache).
func CacheIn(lookupEnv func(string) (string, bool)) string {
	dir, _ := lookupEnv("XDG_CACHE_HOME")
	if !filepath.IsAbs(dir) {
		home, _ := lookupEnv("HOME")
		if !filepath.IsAbs(home) {
			return ""
		}
		dir = filepath.Join(home, ".cache")
	}
	return filepath.Join(dir, "opm", "index-databases")
}

// cacheMeta identifies a cache entry's database file as opm left it, with
// the sums of the layer's blocks (see sumKey).
type cacheMeta struct {
	DBPath  string   `json:"dbPath"`
	Size    int64    `json:"size"`
	ModTime int64    `json:"modTime"`
	SumKey  string   `json:"sumKey,omitempty"`
	Sums    []uint64 `json:"sums,omitempty"`
}

const (
	cacheDB    = "index.db"
	cacheLayer = "layer"
	cacheMetaF = "meta.json"
)

// takeFromCache takes the database of im's top layer from the cache, when it
// holds that layer: the database goes to DatabasePath and the layer
// becomes the previous layer whose blocks Write may copy.
func (b *Builder) takeFromCache(im *image.Image) (found, bool) {
	layers := im.Layers()
	if b.Cache == "" || b.Compression == Zstd || len(layers) == 0 {
		return found{}, false
	}
	top := layers[len(layers)-1]
	if !cacheable(top.Digest) {
		return found{}, false
	}
	dir := filepath.Join(b.Cache, top.Digest.Hex)
	raw, err := os.ReadFile(filepath.Join(dir, cacheMetaF))
	if err != nil {
		return found{}, false
	}
	var meta cacheMeta
	st, err := os.Stat(filepath.Join(dir, cacheDB))
	if json.Unmarshal(raw, &meta) != nil || err != nil || meta.DBPath != b.dbPath || st.Size() != meta.Size || st.ModTime().UnixNano() != meta.ModTime {
		_ = os.RemoveAll(dir) // changed since opm left it
		return found{}, false
	}
	members, err := readMembers(filepath.Join(dir, cacheLayer), top.Size)
	if err != nil || !reusable(members) {
		_ = os.RemoveAll(dir)
		return found{}, false
	}
	prevFile := filepath.Join(b.dir, "previous.layer")
	if os.Rename(filepath.Join(dir, cacheDB), b.db) != nil || os.Rename(filepath.Join(dir, cacheLayer), prevFile) != nil {
		_ = os.Remove(b.db)
		return found{}, false
	}
	_ = os.RemoveAll(dir)
	b.fromCache = true
	if key, err := parseSumKey(meta.SumKey); err == nil && len(meta.Sums) == len(members) {
		for i := range members {
			members[i].Sum = meta.Sums[i]
		}
		b.prev = &previousLayer{file: prevFile, members: members, key: key}
	} else if key, err := newSumKey(); err == nil {
		// An entry without sums (an older opm's): the blocks' sums are
		// those of the layer's tar stream, which the same database at the
		// same path always gives.
		sums, usizes, err := blockSums(layerSpec{db: b.db, dbPath: b.dbPath}, key)
		if err == nil && len(sums) == len(members) {
			for i := range members {
				if usizes[i] != members[i].USize {
					err = errors.New("block sizes differ")
					break
				}
				members[i].Sum = sums[i]
			}
			if err == nil {
				b.prev = &previousLayer{file: prevFile, members: members, key: key}
			}
		}
	}
	return found{top: true, onlyDB: true, digest: top.Digest}, true
}

// FromCache says the database came from the cache: opm wrote it and
// checked it when it changed it last, and nothing has changed it since.
func (b *Builder) FromCache() bool { return b.fromCache }

// readMembers lists the members of a blockgzip layer file from their
// headers and trailers, without decompressing them.
func readMembers(file string, size int64) ([]layerfs.GzipMember, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() != size {
		return nil, errors.New("cached layer has another size")
	}
	var members []layerfs.GzipMember
	head := make([]byte, blockgzip.HeaderLen)
	var trailer [8]byte
	for off := int64(0); off < size; {
		if _, err := f.ReadAt(head, off); err != nil {
			return nil, err
		}
		body, ok := blockgzip.ParseHeader(head)
		if !ok {
			return nil, errors.New("not a blockgzip member")
		}
		n := int64(blockgzip.HeaderLen) + int64(body) + 8
		if _, err := f.ReadAt(trailer[:], off+n-8); err != nil {
			return nil, err
		}
		members = append(members, layerfs.GzipMember{Offset: off, Size: n, USize: int64(binary.LittleEndian.Uint32(trailer[4:])),
			Extra: append([]byte(nil), head[blockgzip.FixedHeaderLen+2:]...)})
		off += n
	}
	return members, nil
}

// blockSums hashes the tar stream of spec block by block, as blockWriter
// cuts it.
func blockSums(spec layerSpec, key *sumKey) (sums []uint64, usizes []int64, err error) {
	s := &blockSummer{key: key, buf: make([]byte, 0, blockgzip.BlockSize)}
	if err := writeTar(s, spec); err != nil {
		return nil, nil, err
	}
	if len(s.buf) > 0 || len(s.sums) == 0 {
		s.flush()
	}
	return s.sums, s.usizes, nil
}

type blockSummer struct {
	key    *sumKey
	buf    []byte
	sums   []uint64
	usizes []int64
}

func (s *blockSummer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), blockgzip.BlockSize-len(s.buf))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		if len(s.buf) == blockgzip.BlockSize {
			s.flush()
		}
	}
	return n, nil
}

func (s *blockSummer) flush() {
	s.sums = append(s.sums, s.key.sum(s.buf))
	s.usizes = append(s.usizes, int64(len(s.buf)))
	s.buf = s.buf[:0]
}

// cachesLayer says whether toCache keeps the layer of spec.
func (b *Builder) cachesLayer(spec layerSpec) bool {
	return b.Cache != "" && b.Compression != Zstd && spec.db != "" && spec.configs == "" && spec.cache == "" && len(spec.whiteouts) == 0
}

// cacheKey is the key to sum the blocks of the layer of spec with, for the
// cache: the previous entry's, else a new one (nil when it is not cached).
func (b *Builder) cacheKey(spec layerSpec) *sumKey {
	if !b.cachesLayer(spec) {
		return nil
	}
	if b.prev != nil && b.prev.key != nil {
		return b.prev.key
	}
	key, err := newSumKey()
	if err != nil {
		return nil
	}
	return key
}

// toCache moves the database and the layer just written into the cache,
// in place of what it held. Only a layer holding the database alone is
// kept (the layers of file-based catalogs are rebuilt whole anyway).
func (b *Builder) toCache(l *dbLayer, spec layerSpec) {
	if !b.cachesLayer(spec) || !cacheable(l.digest) || l.compression == Zstd {
		return
	}
	if err := os.MkdirAll(b.Cache, 0o700); err != nil {
		return
	}
	tmp, err := os.MkdirTemp(b.Cache, ".new-")
	if err != nil {
		return
	}
	defer os.RemoveAll(tmp)
	if os.Rename(l.file, filepath.Join(tmp, cacheLayer)) != nil || os.Rename(b.db, filepath.Join(tmp, cacheDB)) != nil {
		return
	}
	st, err := os.Stat(filepath.Join(tmp, cacheDB))
	if err != nil {
		return
	}
	meta := cacheMeta{DBPath: spec.dbPath, Size: st.Size(), ModTime: st.ModTime().UnixNano()}
	if l.key != nil {
		meta.SumKey, meta.Sums = l.key.String(), l.sums
	}
	raw, _ := json.Marshal(meta)
	if atomicfile.WriteFile(filepath.Join(tmp, cacheMetaF), raw) != nil {
		return
	}
	// Only the newest entry stays: a cached database is hundreds of MB.
	if entries, err := os.ReadDir(b.Cache); err == nil {
		for _, e := range entries {
			if e.Name() != filepath.Base(tmp) {
				_ = os.RemoveAll(filepath.Join(b.Cache, e.Name()))
			}
		}
	}
	_ = os.Rename(tmp, filepath.Join(b.Cache, l.digest.Hex))
}

// cacheable says whether a digest names a cache entry (sha256 hex).
func cacheable(h v1.Hash) bool {
	return h.Algorithm == "sha256" && len(h.Hex) == 64 && !strings.ContainsAny(h.Hex, "/.")
}
