package fbc

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/opmkit/opm/internal/rawjson"
)

// Defaults of Limits. Real catalogs stay far below them: the largest bundle
// blob of the public indexes (olm.bundle.object properties holding every
// CRD) is a few tens of MiB, and opm migrate writes one file per package.
const (
	DefaultMaxBlobBytes int64 = 128 << 20
	DefaultMaxFileBytes int64 = 1 << 30
	// DefaultMaxBlobs is 2.5 times the blobs of the largest public
	// indexes (about 22,000 bundles, 100,000 blobs at most): reading
	// costs a few hundred bytes for each blob, however small, so the
	// bound on blobs bounds that memory where the file limits cannot.
	DefaultMaxBlobs int64 = 250_000
	// DefaultMaxDepth is twice the deepest nesting of real catalogs (a
	// CRD schema inside a bundle, under 50): output indents every level,
	// so a deep value costs its depth squared to write.
	DefaultMaxDepth int64 = 100
)

// minBlobCost is what a blob counts against MaxFileBytes at least: the model
// spends about that much on even the smallest blob, so a file of millions of
// tiny blobs is refused like a file of their real cost.
const minBlobCost = 1 << 10

// Limits bound what Load accepts, checked while reading: a file or blob
// over its limit is a *LoadError naming the file and line, never a runtime
// out-of-memory crash, and the memory loading takes follows the limits. A
// zero field takes its default; a negative one means no limit.
type Limits struct {
	// MaxBlobBytes is the largest blob (one JSON value, one YAML document).
	MaxBlobBytes int64
	// MaxFileBytes is the largest catalog file; each blob in it counts at
	// least 1 KiB. Files are read at most this many bytes at a time
	// altogether, whatever the number of files read in parallel.
	MaxFileBytes int64
	// MaxBlobs is the most blobs of one catalog, all its files together.
	MaxBlobs int64
	// MaxDepth is the deepest nesting of a blob: containers (objects and
	// lists) one inside the other, the blob itself counted.
	MaxDepth int64
}

func (l Limits) blob() int64  { return limitOf(l.MaxBlobBytes, DefaultMaxBlobBytes) }
func (l Limits) file() int64  { return limitOf(l.MaxFileBytes, DefaultMaxFileBytes) }
func (l Limits) blobs() int64 { return limitOf(l.MaxBlobs, DefaultMaxBlobs) }

// depth is MaxDepth as an int; "no limit" is encoding/json's own bound,
// which the decoder would refuse anyway.
func (l Limits) depth() int { return int(min(limitOf(l.MaxDepth, DefaultMaxDepth), 10_000)) }

func limitOf(v, def int64) int64 {
	switch {
	case v == 0:
		return def
	case v < 0:
		return 1<<63 - 1
	}
	return v
}

// LoadOptions tune LoadWith.
type LoadOptions struct {
	Limits Limits
	// Verify, when set, sees each catalog file's bytes as Scan read them,
	// before any is used; an error fails that file. The serve cache uses
	// it to know the content it converts is the content it took the
	// digest of, whatever was renamed into the directory meanwhile.
	Verify func(name string, data []byte) error
	// Package, when set, keeps only the blobs of that package: the others
	// are read no further than their schema and package, which is most of
	// the work of loading a large catalog to look at one package.
	Package string
}

// size renders a byte count for messages.
func size(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

func fileTooBig(name string, got string, l Limits) error {
	return &LoadError{File: name, Msg: fmt.Sprintf("the file is %s, more than the %s a catalog file may hold (--max-file-size): split it, one file per package as opm migrate writes them, or raise the limit", got, size(l.file()))}
}

func blobTooBig(name string, line int, l Limits) error {
	return &LoadError{File: name, Line: line, Msg: fmt.Sprintf("the blob starting here is more than the %s a catalog blob may hold (--max-blob-size): a real bundle blob is a few MiB at most; check what wrote it, or raise the limit", size(l.blob()))}
}

func fileCostTooBig(name string, line, blobs int, l Limits) error {
	return &LoadError{File: name, Line: line, Msg: fmt.Sprintf("the file's first %d blobs, counting each at least 1 KiB, already take more than the %s a catalog file may hold (--max-file-size): split it or raise the limit", blobs, size(l.file()))}
}

func tooDeep(name string, line, blobLine int, l Limits) error {
	where := ""
	if blobLine > 0 && blobLine != line {
		where = fmt.Sprintf(" (in the blob starting at line %d)", blobLine)
	}
	return &LoadError{File: name, Line: line, Msg: fmt.Sprintf("a value here%s is nested more than %d deep (--max-depth): real catalogs nest under 50 (a CRD schema inside a bundle); check what wrote it, or raise the limit", where, l.depth())}
}

func tooManyBlobs(name string, line int, l Limits) error {
	return &LoadError{File: name, Line: line, Msg: fmt.Sprintf("the blob starting here is one more than the %s blobs a catalog may hold, all its files together (--max-blobs): the largest public indexes hold about 100,000; check what wrote it, or raise the limit", count(l.blobs()))}
}

// count renders a number with thousands separators.
func count(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// errCatalogFull ends the reading of a file once another file's blob
// went past --max-blobs: that one is reported, not every file after it.
var errCatalogFull = errors.New("the catalog has more blobs than --max-blobs")

// blobCount counts the blobs of one reading of a catalog, all its files
// together (read in parallel), against Limits.MaxBlobs. It is counted as
// blobs are found, before any is decoded.
type blobCount struct {
	n   atomic.Int64
	max int64
}

func newBlobCount(l Limits) *blobCount { return &blobCount{max: l.blobs()} }

// add counts a blob starting at name:line: an error for the blob past the
// limit, and errCatalogFull for every blob after it.
func (c *blobCount) add(name string, line int, l Limits) error {
	switch n := c.n.Add(1); {
	case n <= c.max:
		return nil
	case n == c.max+1:
		return tooManyBlobs(name, line, l)
	}
	return errCatalogFull
}

// full reports whether the limit was passed: files not yet read are
// then skipped.
func (c *blobCount) full() bool { return c.n.Load() > c.max }

// dropFull removes errCatalogFull from errs.
func dropFull(errs []error) []error {
	out := errs[:0]
	for _, e := range errs {
		if e != errCatalogFull {
			out = append(out, e)
		}
	}
	return out
}

// budget lets readers hold at most max bytes of file data at once: with N
// files read in parallel, memory follows the file limit, not N times it.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	max  int64
	used int64
}

func newBudget(max int64) *budget {
	b := &budget{max: max}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *budget) acquire(n int64) {
	n = min(n, b.max)
	b.mu.Lock()
	for b.used > 0 && b.used+n > b.max {
		b.cond.Wait()
	}
	b.used += n
	b.mu.Unlock()
}

func (b *budget) release(n int64) {
	n = min(n, b.max)
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// readFile reads a catalog file of at most the file limit, refusing a
// larger one before reading it (by its size) or while reading it (a file
// that grows, or is no regular file). It returns the bytes held against
// the budget; the caller releases them once done with the data.
func readFile(fsys fs.FS, name string, l Limits, b *budget) ([]byte, int64, error) {
	f, err := OpenFile(fsys, name)
	if err != nil {
		return nil, 0, &LoadError{File: name, Msg: err.Error()}
	}
	defer func() { _ = f.Close() }() // read-only
	want := int64(0)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > l.file() {
			return nil, 0, fileTooBig(name, size(st.Size()), l)
		}
		want = st.Size()
	}
	if want == 0 {
		want = l.file()
	}
	b.acquire(want)
	// One buffer of the file's size (+1 to see that it grew); a
	// bytes.Buffer would double itself at the end of the file.
	buf := make([]byte, 0, min(want, l.file())+1)
	r := io.LimitReader(f, l.file()+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grows only for files whose size was unknown or changed
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			break
		}
		if err != nil {
			b.release(want)
			return nil, 0, &LoadError{File: name, Msg: err.Error()}
		}
	}
	if int64(len(buf)) > l.file() {
		b.release(want)
		return nil, 0, fileTooBig(name, "larger than that", l)
	}
	if err := checkUTF8(name, buf); err != nil {
		b.release(want)
		return nil, 0, err
	}
	return buf, want, nil
}

// checkUTF8 refuses a catalog file that is not UTF-8 (JSON and YAML both
// must be), naming the line of the first bad byte. Decoding strings would
// replace such bytes by U+FFFD (upstream's render does, silently), and
// the raw paths would copy them into output as they are: either way the
// catalog written is not the one read.
func checkUTF8(name string, data []byte) error {
	if utf8.Valid(data) {
		return nil
	}
	i := 0
	for i < len(data) {
		r, n := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		i += n
	}
	line := 1 + bytes.Count(data[:i], []byte("\n"))
	col := i - (bytes.LastIndexByte(data[:i], '\n') + 1) + 1
	return &LoadError{File: name, Line: line, Msg: fmt.Sprintf("byte 0x%02x at column %d is not valid UTF-8: catalog files must be UTF-8 text; re-encode the file (iconv -t UTF-8) or fix the bytes", data[i], col)}
}

// valueEnd returns the offset just past the JSON value starting at data[i]
// (after white space), scanning at most max bytes of it; too is true when
// the value is longer. deep is the offset of the first container nested
// more than maxDepth deep, or -1 (the value's end is then not looked
// for). An unterminated value ends at len(data) (the decoder reports the
// syntax error).
func valueEnd(data []byte, i int, max int64, maxDepth int) (end int, too bool, deep int) {
	start := i
	depth, inString, escaped := 0, false, false
	for ; i < len(data); i++ {
		if int64(i-start) >= max {
			return i, true, -1
		}
		c := data[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 0 {
					return i + 1, false, -1
				}
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > maxDepth {
				return i, false, i
			}
		case c == '}' || c == ']':
			depth--
			if depth <= 0 {
				return i + 1, false, -1
			}
		case depth == 0 && (rawjson.IsSpace(c) || c == ',' || c == ':'):
			return i, false, -1
		}
	}
	return len(data), false, -1
}

// yamlDocsFit checks the size of each YAML document (separated by lines
// starting with ---) before the file is decoded, the file's cost, and
// counts the documents in blobs (nil: not counted); it returns the first
// problem.
func yamlDocsFit(name string, data []byte, l Limits, blobs *blobCount) error {
	docStart, docLine, line, docs := 0, 1, 1, 0
	cost := int64(0)
	check := func(end int) error {
		n := int64(end - docStart)
		if n > l.blob() {
			return blobTooBig(name, docLine, l)
		}
		if len(bytes.TrimSpace(data[docStart:end])) > 0 {
			docs++
			cost += max(n, minBlobCost)
			if cost > l.file() {
				return fileCostTooBig(name, docLine, docs, l)
			}
			if blobs != nil {
				if err := blobs.add(name, docLine, l); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i := 0; i < len(data); {
		nl := bytes.IndexByte(data[i:], '\n')
		next := len(data)
		if nl >= 0 {
			next = i + nl + 1
		}
		if bytes.HasPrefix(data[i:], []byte("---")) {
			if err := check(i); err != nil {
				return err
			}
			docStart, docLine = i, line
		} else if int64(next-docStart) > l.blob() {
			return blobTooBig(name, docLine, l)
		}
		i = next
		line++
	}
	return check(len(data))
}
