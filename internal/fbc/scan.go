package fbc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/opmkit/opm/internal/yamldoc"
)

// Scanned is a catalog read for where each package's blobs are, not for
// the blobs themselves: Each then loads one package at a time, so a
// command over a whole catalog holds the largest package in memory rather
// than the catalog. What Each hands over, and the errors Err returns once
// Each has run, are what Load gives for the same files, package by
// package.
type Scanned struct {
	fsys  fs.FS
	files []string
	// refs are each package's blobs in Load's order (file walk order,
	// then place in the file).
	refs  map[string][]blobRef
	names []string
	// Ignored lists the files skipped because they are neither JSON nor
	// YAML (by extension), as Catalog.Ignored.
	Ignored []string
	// Entries counts the channel entries of the catalog, Bundles its
	// olm.bundle blobs.
	Entries, Bundles int

	root   io.Closer // of ScanDir, closed by Close
	lim    Limits
	verify func(name string, data []byte) error
	mem    *budget
	blobs  *blobCount

	spool   *os.File // YAML documents, converted to JSON
	spoolMu sync.Mutex
	spoolAt int64

	errMu sync.Mutex
	errs  []keyedErr
}

// castagnoli is CRC-32C's table: hardware-assisted, so checking every
// blob read again costs next to nothing.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// blobRef is where one blob is: in file (an index into files) at off, n
// bytes long, or in the spool.
type blobRef struct {
	file    int
	seq     int // place in its file, for ordering errors
	off     int64
	n       int
	line    int
	spooled bool
	head    blobHead
	// sum is the CRC-32C of the bytes scanned: Each reads a blob again
	// from its file, and a file replaced in between must not hand over
	// other bytes than the ones the scan (and a digest) saw.
	sum uint32
}

// keyedErr is a load error with its place in Load's order: file (-1 for
// the walk itself) and place in the file.
type keyedErr struct {
	file, seq int
	err       error
}

// ScanDir scans the catalog in directory dir (see Scanned), read through
// an os.Root as LoadDirWith reads it; Close it when done.
func ScanDir(dir string, opts LoadOptions) (*Scanned, error) {
	fsys, root, err := OpenDir(dir)
	if err != nil {
		return nil, err
	}
	s, err := Scan(fsys, opts)
	if err != nil {
		_ = root.Close() // read-only
		return nil, err
	}
	s.root = root
	return s, nil
}

// Scan reads the files of the catalog in fsys, as LoadWith does (within
// opts' limits), keeping only where each blob is and which package it
// belongs to. Problems are kept for Err. The error returned is one of the
// scan itself (a temporary file that cannot be made).
func Scan(fsys fs.FS, opts LoadOptions) (*Scanned, error) {
	s := &Scanned{fsys: fsys, refs: map[string][]blobRef{}, lim: opts.Limits, verify: opts.Verify, mem: newBudget(opts.Limits.file()), blobs: newBlobCount(opts.Limits)}
	walkSeq := 0
	files, ignored := catalogFiles(fsys, func(err error) {
		s.errs = append(s.errs, keyedErr{file: -1, seq: walkSeq, err: err})
		walkSeq++
	})
	s.files = append(s.files, files...)
	s.Ignored = append(s.Ignored, ignored...)
	parts := make([]fileScan, len(s.files))
	workers := min(runtime.GOMAXPROCS(0), len(s.files))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				parts[i] = s.scanFile(i)
			}
		}()
	}
	for i := range s.files {
		next <- i
	}
	close(next)
	wg.Wait()
	var spoolErr error
	for i := range parts {
		for _, r := range parts[i].refs {
			if _, ok := s.refs[r.head.pkg]; !ok {
				s.names = append(s.names, r.head.pkg)
			}
			s.refs[r.head.pkg] = append(s.refs[r.head.pkg], r)
		}
		s.errs = append(s.errs, parts[i].errs...)
		s.Entries += parts[i].entries
		s.Bundles += parts[i].bundles
		if parts[i].spoolErr != nil && spoolErr == nil {
			spoolErr = parts[i].spoolErr
		}
	}
	sort.Strings(s.names)
	if spoolErr != nil {
		_ = s.Close() // the spool error is the one to report
		return nil, fmt.Errorf("load catalog: %w", spoolErr)
	}
	return s, nil
}

// fileScan is what scanning one file found.
type fileScan struct {
	refs     []blobRef
	errs     []keyedErr
	entries  int
	bundles  int
	spoolErr error
}

func (s *Scanned) scanFile(i int) fileScan {
	name := s.files[i]
	var out fileScan
	if s.blobs.full() {
		return out // reported where it was passed
	}
	data, held, err := readFile(s.fsys, name, s.lim, s.mem)
	if err != nil {
		out.errs = append(out.errs, keyedErr{file: i, err: err})
		return out
	}
	defer s.mem.release(held)
	if s.verify != nil {
		if err := s.verify(name, data); err != nil {
			out.errs = append(out.errs, keyedErr{file: i, err: &LoadError{File: name, Msg: err.Error(), Err: err}})
			return out
		}
	}
	seq := 0
	add := func(line int, off int64, raw []byte, spool bool) {
		defer func() { seq++ }()
		pos := Position{File: name, Line: line}
		h, err := classify(pos, raw)
		if err != nil {
			out.errs = append(out.errs, keyedErr{file: i, seq: seq, err: err})
			return
		}
		if h.skip {
			return
		}
		if h.schema == SchemaBundle {
			out.bundles++
		}
		if h.schema == SchemaChannel {
			var ch struct {
				Entries []struct{} `json:"entries"`
			}
			if json.Unmarshal(raw, &ch) == nil {
				out.entries += len(ch.Entries)
			}
		}
		r := blobRef{file: i, seq: seq, off: off, n: len(raw), line: line, head: h, sum: crc32.Checksum(raw, castagnoli)}
		if spool {
			at, err := s.spoolWrite(raw)
			if err != nil {
				out.spoolErr = err
				return
			}
			r.spooled, r.off = true, at
		}
		out.refs = append(out.refs, r)
	}
	if strings.EqualFold(path.Ext(name), ".json") {
		err := splitJSON(name, data, s.lim, s.blobs, func(line int, off int64, raw []byte) { add(line, off, raw, false) })
		if err != nil && err != errCatalogFull {
			out.errs = append(out.errs, keyedErr{file: i, seq: seq, err: err})
		}
		return out
	}
	if err := yamlDocsFit(name, data, s.lim, s.blobs); err == errCatalogFull {
		return out
	} else if err != nil {
		out.errs = append(out.errs, keyedErr{file: i, err: err})
		return out
	}
	docs, err := yamldoc.Decode(name, data)
	if err != nil {
		var se *yamldoc.SyntaxError
		if errors.As(err, &se) {
			err = &LoadError{File: name, Line: se.Line, Msg: "YAML syntax error: " + se.Msg}
		} else {
			err = &LoadError{File: name, Msg: err.Error()}
		}
		out.errs = append(out.errs, keyedErr{file: i, err: err})
		return out
	}
	for _, d := range docs {
		raw, err := yamlBlob(name, d, s.lim)
		if err != nil {
			out.errs = append(out.errs, keyedErr{file: i, seq: seq, err: err})
			seq++
			continue
		}
		add(d.Line, 0, raw, true)
	}
	return out
}

// spoolWrite keeps a converted YAML document in the spool, an unlinked
// temporary file, and returns where.
func (s *Scanned) spoolWrite(raw []byte) (int64, error) {
	s.spoolMu.Lock()
	defer s.spoolMu.Unlock()
	if s.spool == nil {
		f, err := os.CreateTemp("", "opm-catalog-*")
		if err != nil {
			return 0, err
		}
		// Unlinked: the data goes when the file is closed, however opm ends.
		_ = os.Remove(f.Name())
		s.spool = f
	}
	if _, err := s.spool.WriteAt(raw, s.spoolAt); err != nil {
		return 0, err
	}
	at := s.spoolAt
	s.spoolAt += int64(len(raw))
	return at, nil
}

// Close releases the spool and the directory.
func (s *Scanned) Close() error {
	if s.root != nil {
		_ = s.root.Close() // read-only
		s.root = nil
	}
	if s.spool != nil {
		err := s.spool.Close()
		s.spool = nil
		return err
	}
	return nil
}

// Cut reports whether the catalog holds more blobs than Limits.MaxBlobs:
// the scan stopped there, so what it found is part of a catalog, and a
// caller stops at Err rather than check or convert that part.
func (s *Scanned) Cut() bool { return s.blobs.full() }

// Packages names the catalog's packages, sorted ("" for blobs of none).
func (s *Scanned) Packages() []string { return s.names }

// Err returns the load errors found, joined in Load's order: those of the
// scan, and those of the packages Each has loaded (all of them once Each
// went through the catalog).
func (s *Scanned) Err() error {
	s.errMu.Lock()
	defer s.errMu.Unlock()
	errs := append([]keyedErr(nil), s.errs...)
	sort.SliceStable(errs, func(i, j int) bool {
		if errs[i].file != errs[j].file {
			return errs[i].file < errs[j].file
		}
		return errs[i].seq < errs[j].seq
	})
	out := make([]error, len(errs))
	for i, e := range errs {
		out[i] = e.err
	}
	return errors.Join(out...)
}

// Each calls f with each package's blobs, in package name order, as Load
// would have loaded them (blobs that fail to decode are left out and
// their errors kept for Err). Packages are read ahead on every CPU, a few
// at a time.
func (s *Scanned) Each(ctx context.Context, f func(name string, c *Catalog) error) error {
	return eachPrepared(ctx, s, func(_ string, c *Catalog) *Catalog { return c }, f)
}

// EachInWriteOrder is Each in the order Write prints packages: by name,
// the blobs of no package last. A Writer can take each call as it comes.
func (s *Scanned) EachInWriteOrder(ctx context.Context, f func(name string, c *Catalog) error) error {
	names := s.Packages()
	if len(names) > 0 && names[0] == "" {
		names = append(append(make([]string, 0, len(names)), names[1:]...), "")
	}
	return eachPrepared(ctx, &orderedSource{s: s, names: names}, func(_ string, c *Catalog) *Catalog { return c }, f)
}

// orderedSource is a Scanned catalog's packages in another order.
type orderedSource struct {
	s     *Scanned
	names []string
}

func (o *orderedSource) Packages() []string        { return o.names }
func (o *orderedSource) load(name string) *Catalog { return o.s.load(name) }

// load reads one package's blobs.
func (s *Scanned) load(name string) *Catalog {
	c := &Catalog{}
	var errs []keyedErr
	open := map[int]io.ReaderAt{}
	var closers []io.Closer
	defer func() {
		for _, cl := range closers {
			_ = cl.Close()
		}
	}()
	readerOf := func(i int) (io.ReaderAt, error) {
		if r, ok := open[i]; ok {
			return r, nil
		}
		f, err := OpenFile(s.fsys, s.files[i])
		if err != nil {
			return nil, err
		}
		closers = append(closers, f)
		ra, ok := f.(io.ReaderAt)
		if !ok {
			// A file system without random access: read the file once.
			data, err := io.ReadAll(f)
			if err != nil {
				return nil, err
			}
			ra = strings.NewReader(string(data))
		}
		open[i] = ra
		return ra, nil
	}
	for _, r := range s.refs[name] {
		var ra io.ReaderAt
		var err error
		if r.spooled {
			ra = s.spool
		} else {
			ra, err = readerOf(r.file)
		}
		raw := make([]byte, r.n)
		if err == nil {
			_, err = ra.ReadAt(raw, r.off)
		}
		if err != nil {
			errs = append(errs, keyedErr{file: r.file, seq: r.seq, err: &LoadError{File: s.files[r.file], Line: r.line, Msg: "read again: " + err.Error()}})
			continue
		}
		if crc32.Checksum(raw, castagnoli) != r.sum {
			errs = append(errs, keyedErr{file: r.file, seq: r.seq, err: &LoadError{File: s.files[r.file], Line: r.line, Msg: "the file changed while the catalog was being read (the blob here is no longer the one scanned); read the catalog again once nothing writes to it", Err: ErrChanged}})
			continue
		}
		if err := c.decodeBlob(Position{File: s.files[r.file], Line: r.line}, r.head, raw); err != nil {
			errs = append(errs, keyedErr{file: r.file, seq: r.seq, err: err})
		}
	}
	if len(errs) > 0 {
		s.errMu.Lock()
		s.errs = append(s.errs, errs...)
		s.errMu.Unlock()
	}
	return c
}

// packageSource is a catalog that gives its packages one at a time.
type packageSource interface {
	Packages() []string
	load(name string) *Catalog
}

// wholeCatalog is a catalog in memory as a packageSource.
type wholeCatalog struct {
	c     *Catalog
	names []string
}

func (w *wholeCatalog) Packages() []string {
	if w.names == nil {
		w.names = w.c.PackageNames()
	}
	return w.names
}

func (w *wholeCatalog) load(name string) *Catalog { return w.c.Package(name) }

// eachPrepared loads each package of src and runs prepare on it on every
// CPU, a few packages ahead, and hands the results to consume in package
// order, on the caller's goroutine. consume's first error stops it.
func eachPrepared[T any](ctx context.Context, src packageSource, prepare func(name string, c *Catalog) T, consume func(name string, v T) error) error {
	names := src.Packages()
	workers := min(runtime.GOMAXPROCS(0), len(names))
	if workers == 0 {
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type job struct {
		i   int
		out chan T
	}
	jobs := make(chan job)
	// order bounds how far the workers run ahead of consume.
	order := make(chan chan T, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				j.out <- prepare(names[j.i], src.load(names[j.i]))
			}
		}()
	}
	go func() {
		defer close(order)
		defer close(jobs)
		for i := range names {
			out := make(chan T, 1)
			select {
			case jobs <- job{i, out}:
			case <-ctx.Done():
				return
			}
			select {
			case order <- out:
			case <-ctx.Done():
				return
			}
		}
	}()
	var err error
	i := 0
	for out := range order {
		if err != nil {
			continue // drain; results are buffered, no worker waits
		}
		if err = ctx.Err(); err != nil {
			cancel()
			continue
		}
		v := <-out
		if err = consume(names[i], v); err != nil {
			cancel()
		}
		i++
	}
	wg.Wait()
	return err
}
