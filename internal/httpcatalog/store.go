// Package httpcatalog serves a file-based catalog over HTTP the way OLM v1's
// catalogd serves a ClusterCatalog: GET /api/v1/all answers the whole
// catalog as JSON lines, and (when enabled, as catalogd's APIV1MetasHandler
// gate does) GET /api/v1/metas answers the blobs of a schema, package and
// name. Clients and curl/jq recipes written for catalogd work against it.
//
// The catalog is stored as catalogd stores it: one file, every blob
// re-encoded on one line (keys sorted, no HTML escaping) in catalog order,
// and an in-memory index of each blob's byte range by schema, package and
// name. Requests read the file; memory holds only the index.
package httpcatalog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/opmkit/opm/internal/fbc"
)

// FileName is the JSON-lines file Build writes in its directory.
const FileName = "catalog.jsonl"

// Store is a catalog in catalogd's stored form.
type Store struct {
	file    *os.File
	size    int64
	modTime time.Time

	blobs     []blob // in file order
	bySchema  map[string][]int32
	byPackage map[string][]int32
	byName    map[string][]int32
}

// blob is one line of the file: where it is and what it is.
type blob struct {
	offset, length int64
	schema, pkg    string
	name           string
}

// Build writes the catalog under fsys to dir/catalog.jsonl and indexes it.
// Its modification time (Last-Modified) is the time of the build, as
// catalogd's is the time it unpacked the catalog: content served after a
// restart is never claimed older than it is.
func Build(fsys fs.FS, dir string) (*Store, error) { return BuildWith(fsys, dir, fbc.Limits{}) }

// BuildWith is Build reading the catalog within lim (serve's --max-*
// flags).
func BuildWith(fsys fs.FS, dir string, lim fbc.Limits) (*Store, error) {
	p := filepath.Join(dir, FileName)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return nil, fmt.Errorf("store catalog: %w", err)
	}
	s := &Store{file: f, bySchema: map[string][]int32{}, byPackage: map[string][]int32{}, byName: map[string][]int32{}}
	bw := bufio.NewWriterSize(f, 1<<16)
	w := &countWriter{w: bw}
	strs := map[string]string{} // interned: many blobs share a package and schema
	intern := func(v string) string {
		if i, ok := strs[v]; ok {
			return i
		}
		strs[v] = v
		return v
	}
	var line []byte
	err = fbc.WalkBlobsWith(fsys, fbc.LoadOptions{Limits: lim}, func(file string, at int, raw json.RawMessage) error {
		if t := bytes.TrimSpace(raw); bytes.Equal(t, []byte("null")) {
			return nil // a YAML document that is only "null"
		} else if len(t) == 0 || t[0] != '{' {
			return &fbc.LoadError{File: file, Line: at, Msg: "a catalog blob must be a JSON object"}
		}
		p := &canonParser{data: raw}
		var err error
		if line, err = p.blob(line[:0]); err != nil {
			return &fbc.LoadError{File: file, Line: at, Msg: err.Error()}
		}
		keys, err := metaKeys(p.top)
		if err != nil {
			return &fbc.LoadError{File: file, Line: at, Msg: err.Error()}
		}
		start := w.n
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return fmt.Errorf("%s:%d: %w", file, at, err)
		}
		b := blob{offset: start, length: w.n - start, schema: intern(keys[0]), pkg: intern(keys[1]), name: intern(keys[2])}
		i := int32(len(s.blobs))
		s.blobs = append(s.blobs, b)
		if b.schema != "" {
			s.bySchema[b.schema] = append(s.bySchema[b.schema], i)
		}
		if b.pkg != "" {
			s.byPackage[b.pkg] = append(s.byPackage[b.pkg], i)
		}
		if b.name != "" {
			s.byName[b.name] = append(s.byName[b.name], i)
		}
		return nil
	})
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store catalog: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("store catalog: %w", err)
	}
	s.size, s.modTime = st.Size(), st.ModTime()
	return s, nil
}

// metaKeys returns a blob's schema, package and name from its top-level
// members. Like catalogd, the keys match case-insensitively, and two keys
// that differ only by case are an error; a value that is not a string
// counts as absent.
func metaKeys(members []member) ([3]string, error) {
	var out [3]string
	var seen [3]string
	for _, m := range members {
		for i, want := range [3]string{"schema", "package", "name"} {
			if !strings.EqualFold(m.key, want) {
				continue
			}
			if seen[i] != "" {
				return out, fmt.Errorf("keys %q and %q differ only by case: keep one", clip(seen[i]), clip(m.key))
			}
			seen[i] = m.key
			if len(m.value) > 0 && m.value[0] == '"' {
				_ = json.Unmarshal(m.value, &out[i]) // canonical: always a valid string
			}
		}
	}
	return out, nil
}

// Close releases the file.
func (s *Store) Close() error { return s.file.Close() }

// Size is the length of the JSON-lines file.
func (s *Store) Size() int64 { return s.size }

// ModTime is when the catalog was stored.
func (s *Store) ModTime() time.Time { return s.modTime }

// All reads the whole JSON-lines file (for http.ServeContent).
func (s *Store) All() io.ReadSeeker { return io.NewSectionReader(s.file, 0, s.size) }

// Query returns the lines of the blobs whose schema, package and name are
// those given ("" matches any), in file order.
func (s *Store) Query(schema, pkg, name string) io.Reader {
	var lists [][]int32
	for _, q := range []struct {
		v string
		m map[string][]int32
	}{{schema, s.bySchema}, {pkg, s.byPackage}, {name, s.byName}} {
		if q.v != "" {
			lists = append(lists, q.m[q.v])
		}
	}
	if len(lists) == 0 {
		return io.NewSectionReader(s.file, 0, s.size)
	}
	// Walk the shortest list and keep the blobs the other fields match.
	short := lists[0]
	for _, l := range lists[1:] {
		if len(l) < len(short) {
			short = l
		}
	}
	var rs []io.Reader
	for _, i := range short {
		b := s.blobs[i]
		if (schema == "" || b.schema == schema) && (pkg == "" || b.pkg == pkg) && (name == "" || b.name == name) {
			rs = append(rs, io.NewSectionReader(s.file, b.offset, b.length))
		}
	}
	return io.MultiReader(rs...)
}

// Blobs is the number of blobs stored.
func (s *Store) Blobs() int { return len(s.blobs) }

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	if err == nil && n < len(p) {
		err = errors.New("short write")
	}
	return n, err
}
