// Package fbccache turns a file-based catalog directory into the sqlite index
// database that internal/registry serves, and keeps that database in a cache
// directory (built at image build time with `opm serve DIR --cache-dir D
// --cache-only`) together with a digest of the catalog files it came from,
// so that serving starts without parsing the catalog when nothing changed.
package fbccache

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"sync"

	"github.com/opmkit/opm/internal/fbc"
)

// Names of the files in a cache directory.
const (
	DatabaseFile = "index.db"
	MetaFile     = "opm-cache.json"
)

// format changes whenever the conversion changes what it writes, so that a
// cache built by another opm version is rebuilt rather than trusted (3:
// a JSON catalog's property values and other blobs are stored in
// canonical form; 4: entry notes keep each channel's own entries).
const format = "opm-fbc-sqlite-4"

// Options control Prepare.
type Options struct {
	// CacheDir keeps the database and its digest; "" builds into a
	// temporary directory removed by the cleanup function.
	CacheDir string
	// EnforceIntegrity fails when CacheDir holds no database for the
	// catalog's current content instead of rebuilding it.
	EnforceIntegrity bool
	// Load bounds what is read from the catalog.
	Load fbc.LoadOptions

	// beforeBuild, for tests, runs between the digest and the build.
	beforeBuild func()
}

// Result says what Prepare did.
type Result struct {
	// Database is the index database to serve.
	Database string
	// Digest is the catalog's digest ("" without a cache directory).
	Digest string
	// Built is true when the database was built now, false when the
	// cache was used.
	Built bool
}

type meta struct {
	Format string `json:"format"`
	Digest string `json:"digest"`
	// Cache holds the sha256 of every other file of the cache directory
	// (the database): a cache whose files were edited or swapped is not
	// trusted, and one with files it did not write is not either.
	Cache map[string]string `json:"cache"`
}

// cacheFiles hashes every file of cacheDir but MetaFile.
func cacheFiles(cacheDir string) (map[string]string, error) {
	entries, err := os.ReadDir(cacheDir)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, e := range entries {
		if e.Name() == MetaFile {
			continue
		}
		if !e.Type().IsRegular() {
			out[e.Name()] = "not a regular file"
			continue
		}
		f, err := os.Open(filepath.Join(cacheDir, e.Name()))
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		_ = f.Close() // read-only
		if err != nil {
			return nil, err
		}
		out[e.Name()] = "sha256:" + hex.EncodeToString(h.Sum(nil))
	}
	return out, nil
}

// mismatch says how the cache's files differ from what m recorded; "" when
// they do not.
func (m meta) mismatch(cacheDir string) (string, error) {
	got, err := cacheFiles(cacheDir)
	if err != nil {
		return "", err
	}
	if len(m.Cache) == 0 {
		return "it records no digest of its own files (built by an older opm)", nil
	}
	var names []string
	for n := range got {
		names = append(names, n)
	}
	for n := range m.Cache {
		if _, ok := got[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	for _, n := range names {
		switch want, have := m.Cache[n], got[n]; {
		case want == "":
			return fmt.Sprintf("%s in the cache was not written by the cache build", n), nil
		case have == "":
			return fmt.Sprintf("%s is missing from the cache", n), nil
		case want != have:
			return fmt.Sprintf("%s in the cache changed since the cache was built (%s, recorded %s)", n, have, want), nil
		}
	}
	return "", nil
}

// Digest hashes every regular file under dir (names, sizes and contents,
// in lexical order), whether or not the catalog reads it: any change to
// the directory invalidates a cache. Files are hashed on every CPU at once;
// the digest is the hash of their list.
func Digest(dir string) (string, error) {
	d, _, err := digestFiles(dir)
	return d, err
}

// digestFiles is Digest, with each file's own sha256 (hex) by its path.
func digestFiles(dir string) (string, map[string]string, error) {
	fsys, root, err := fbc.OpenDir(dir)
	if err != nil {
		return "", nil, fmt.Errorf("digest catalog %s: %w", dir, err)
	}
	defer func() { _ = root.Close() }() // read-only
	var files []string
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return "", nil, fmt.Errorf("digest catalog %s: %w", dir, err)
	}
	sums := make([]fileSum, len(files))
	errs := make([]error, len(files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				sums[i], errs[i] = sumFile(fsys, files[i])
			}
		}()
	}
	for i := range files {
		next <- i
	}
	close(next)
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return "", nil, fmt.Errorf("digest catalog %s: %w", dir, err)
	}
	h := sha256.New()
	_, _ = io.WriteString(h, format+"\n") // a hash never fails to write
	byPath := make(map[string]string, len(files))
	for i, fs := range sums {
		if fs.dir {
			continue
		}
		_, _ = io.WriteString(h, files[i]+"\x00"+strconv.FormatInt(fs.size, 10)+"\x00"+fs.sha+"\n")
		byPath[files[i]] = fs.sha
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), byPath, nil
}

// fileSum is one file's part of the digest; dir marks a symbolic link to
// a directory, which is left out as Load skips it.
type fileSum struct {
	size int64
	sha  string
	dir  bool
}

// sumFile hashes one file of the catalog, read as the loader reads it.
func sumFile(fsys fs.FS, p string) (fileSum, error) {
	if st, err := fs.Stat(fsys, p); err == nil && st.IsDir() {
		return fileSum{dir: true}, nil
	}
	f, err := fbc.OpenFile(fsys, p)
	if err != nil {
		return fileSum{}, err
	}
	defer func() { _ = f.Close() }() // read-only
	st, err := f.Stat()
	if err != nil {
		return fileSum{}, err
	}
	if st.IsDir() {
		return fileSum{dir: true}, nil
	}
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return fileSum{}, err
	}
	if n != st.Size() {
		return fileSum{}, fmt.Errorf("%s changed while being read", p)
	}
	return fileSum{size: n, sha: hex.EncodeToString(h.Sum(nil))}, nil
}

// Check reports whether cacheDir holds a database for the catalog whose
// digest is digest, and its files are the ones the build wrote.
func Check(cacheDir, digest string) (bool, error) {
	why, err := check(cacheDir, digest)
	return why == "", err
}

// check says why cacheDir cannot be used for the catalog ("" when it can).
func check(cacheDir, digest string) (string, error) {
	data, err := os.ReadFile(filepath.Join(cacheDir, MetaFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "it is missing or was not finished", nil
	}
	if err != nil {
		return "", err
	}
	var m meta
	switch {
	case json.Unmarshal(data, &m) != nil:
		return MetaFile + " is not valid JSON", nil
	case m.Format != format:
		return "it was built by another opm version", nil
	case m.Digest != digest:
		return "it was built from other catalog content", nil
	}
	st, err := os.Stat(filepath.Join(cacheDir, DatabaseFile))
	if err != nil || !st.Mode().IsRegular() {
		return DatabaseFile + " is missing from the cache", nil
	}
	return m.mismatch(cacheDir)
}

// changeAttempts is how many times Prepare reads a catalog that keeps
// changing under it before it gives up.
const changeAttempts = 3

// Prepare returns the database to serve for the catalog in dir: the cached
// one when it matches the catalog, else one built now (into CacheDir when
// set). cleanup removes what was built in a temporary directory. A
// catalog that changes while it is read (a file renamed in between the
// digest and the conversion) is read again, a few times at most: a cache
// never records one content's digest with another's database.
func Prepare(ctx context.Context, dir string, opts Options) (res *Result, cleanup func(), err error) {
	for attempt := 1; ; attempt++ {
		res, cleanup, err = prepare(ctx, dir, opts)
		if !errors.Is(err, fbc.ErrChanged) {
			return res, cleanup, err
		}
		if attempt == changeAttempts {
			return nil, cleanup, fmt.Errorf("catalog %s changed each of the %d times it was read; serve it once nothing writes to it: %w", dir, changeAttempts, err)
		}
	}
}

func prepare(ctx context.Context, dir string, opts Options) (res *Result, cleanup func(), err error) {
	cleanup = func() {}
	res = &Result{}
	var digest string
	var sums map[string]string
	if opts.CacheDir != "" {
		// The digest only matters to a cache: without one, reading every
		// file once more would only delay serving.
		if digest, sums, err = digestFiles(dir); err != nil {
			return nil, cleanup, err
		}
		res.Digest = digest
		why, err := check(opts.CacheDir, digest)
		if err != nil {
			return nil, cleanup, fmt.Errorf("cache %s: %w", opts.CacheDir, err)
		}
		if why == "" {
			res.Database = filepath.Join(opts.CacheDir, DatabaseFile)
			return res, cleanup, nil
		}
		if opts.EnforceIntegrity {
			return nil, cleanup, fmt.Errorf("cache %s does not match the catalog %s: %s; build it again with `opm serve %s --cache-dir %s --cache-only`, or serve without enforcing it (--cache-enforce-integrity=false)",
				opts.CacheDir, dir, why, dir, opts.CacheDir)
		}
	}
	if opts.beforeBuild != nil {
		opts.beforeBuild()
	}
	res.Built = true
	if opts.CacheDir == "" {
		tmp, err := os.MkdirTemp("", "opm-serve-")
		if err != nil {
			return nil, cleanup, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		res.Database = filepath.Join(tmp, DatabaseFile)
		if err := build(ctx, dir, res.Database, fbc.ToIndexOptions{Scratch: true}, opts.Load); err != nil {
			cleanup()
			return nil, func() {}, err
		}
		return res, cleanup, nil
	}
	if err := os.MkdirAll(opts.CacheDir, 0o755); err != nil {
		return nil, cleanup, fmt.Errorf("cache %s: %w", opts.CacheDir, err)
	}
	// The old digest goes first: a crash between the two writes leaves a
	// cache that is rebuilt, never one that is trusted wrongly.
	if err := os.Remove(filepath.Join(opts.CacheDir, MetaFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, cleanup, fmt.Errorf("cache %s: %w", opts.CacheDir, err)
	}
	res.Database = filepath.Join(opts.CacheDir, DatabaseFile)
	load := opts.Load
	load.Verify = func(name string, data []byte) error {
		// The bytes converted must be the ones the digest covers: a file
		// renamed in after the digest was taken would otherwise be
		// recorded under the original's digest.
		sum := sha256.Sum256(data)
		if want, ok := sums[name]; !ok || want != hex.EncodeToString(sum[:]) {
			return fmt.Errorf("%w (the file differs from when the cache digest was taken)", fbc.ErrChanged)
		}
		return nil
	}
	if err := build(ctx, dir, res.Database, fbc.ToIndexOptions{Force: true, Scratch: true}, load); err != nil {
		return nil, cleanup, err
	}
	files, err := cacheFiles(opts.CacheDir)
	if err != nil {
		return nil, cleanup, fmt.Errorf("cache %s: %w", opts.CacheDir, err)
	}
	data, _ := json.Marshal(meta{Format: format, Digest: digest, Cache: files})
	tmp, err := os.CreateTemp(opts.CacheDir, "."+MetaFile+"-*")
	if err != nil {
		return nil, cleanup, fmt.Errorf("cache %s: %w", opts.CacheDir, err)
	}
	_, werr := tmp.Write(append(data, '\n'))
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(tmp.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), filepath.Join(opts.CacheDir, MetaFile))
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return nil, cleanup, fmt.Errorf("cache %s: %w", opts.CacheDir, werr)
	}
	return res, cleanup, nil
}

// build converts the catalog in dir a package at a time: memory holds a
// few packages, not the catalog.
func build(ctx context.Context, dir, db string, opts fbc.ToIndexOptions, load fbc.LoadOptions) error {
	_, err := fbc.DirToIndex(ctx, dir, db, opts, load)
	var le *fbc.CatalogLoadError
	if errors.As(err, &le) {
		return fmt.Errorf("load catalog %s: %w\n(`opm validate %s` lists every problem)", dir, le.Err, dir)
	}
	return err
}
