package fbc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/atomicfile"
)

// Format is a catalog file format.
type Format string

// Formats Write and WriteDir produce.
const (
	FormatJSON Format = "json"
	FormatYAML Format = "yaml"
)

// ParseFormat accepts "json" or "yaml" ("" is json).
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(s) {
	case "", "json":
		return FormatJSON, nil
	case "yaml", "yml":
		return FormatYAML, nil
	}
	return "", fmt.Errorf("unknown catalog format %q: use json or yaml", s)
}

// Write writes the catalog as upstream opm prints it: package by package
// (sorted by name), the olm.package blob, then channels and bundles (each
// sorted by name), then other blobs (by schema, then olm.deprecations);
// blobs of no package last. JSON is one object after another, indented by four spaces,
// without HTML escaping; YAML is one document per blob, each starting with
// "---", keys sorted.
func Write(w io.Writer, c *Catalog, format Format) error {
	sw, err := NewWriter(w, format)
	if err != nil {
		return err
	}
	if err := sw.Add(c); err != nil {
		return err
	}
	return sw.Flush()
}

// Writer is Write a package at a time: Add each package's blobs in package
// name order and the output is what Write prints for the whole catalog.
type Writer struct {
	bw   *bufio.Writer
	enc  func(v any) error
	last string
	any  bool
}

// NewWriter writes catalog blobs to w in format.
func NewWriter(w io.Writer, format Format) (*Writer, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	sw := &Writer{bw: bw}
	switch format {
	case FormatJSON, "":
		je := json.NewEncoder(bw)
		je.SetIndent("", "    ")
		je.SetEscapeHTML(false)
		// The blobs opm knows are printed by appendBlobJSON, the same
		// bytes in a fraction of the time; the encoder prints the rest.
		var fast blobWriter
		sw.enc = func(v any) error {
			fast.b = fast.b[:0]
			if fast.appendBlobJSON(v) {
				_, err := bw.Write(fast.b)
				return err
			}
			return je.Encode(v)
		}
	case FormatYAML:
		var buf bytes.Buffer
		je := json.NewEncoder(&buf)
		je.SetEscapeHTML(false)
		sw.enc = func(v any) error {
			buf.Reset()
			if err := je.Encode(v); err != nil {
				return err
			}
			y, err := yaml.JSONToYAML(buf.Bytes())
			if err != nil {
				return err
			}
			if _, err := bw.WriteString("---\n"); err != nil {
				return err
			}
			_, err = bw.Write(y)
			return err
		}
	default:
		return nil, fmt.Errorf("write catalog: unknown format %q", format)
	}
	return sw, nil
}

// Add writes the blobs of c, which holds whole packages that come after
// every package added before, in Write's order (by name, blobs of no
// package last): a package split over two calls would not print as Write
// prints it, so it is refused.
func (sw *Writer) Add(c *Catalog) error {
	for _, p := range c.groupByPackage() {
		if sw.any && !packageBefore(sw.last, p.name) {
			return fmt.Errorf("write catalog: package %q comes after %q (packages must be written whole, in name order)", p.name, sw.last)
		}
		sw.last, sw.any = p.name, true
		for _, v := range p.blobs() {
			if err := sw.enc(v); err != nil {
				return fmt.Errorf("write catalog: %w", err)
			}
		}
	}
	return nil
}

// Flush writes out what is buffered.
func (sw *Writer) Flush() error { return sw.bw.Flush() }

// packageBefore is the order packages are written in: by name, blobs of
// no package ("") after every package, as upstream writes them.
func packageBefore(a, b string) bool {
	if (a == "") != (b == "") {
		return b == ""
	}
	return a < b
}

// sortedBlobs is one package's blobs in writing order.
type sortedBlobs struct {
	name string
	cat  *Catalog
}

func (s sortedBlobs) blobs() []any {
	c := s.cat
	out := make([]any, 0, len(c.Packages)+len(c.Channels)+len(c.Bundles)+len(c.Others))
	for i := range c.Packages {
		out = append(out, &c.Packages[i])
	}
	for i := range c.Channels {
		out = append(out, &c.Channels[i])
	}
	for i := range c.Bundles {
		out = append(out, &c.Bundles[i])
	}
	for i := range c.Others {
		out = append(out, c.Others[i])
	}
	return out
}

// groupByPackage splits the catalog by package name and sorts each part.
func (c *Catalog) groupByPackage() []sortedBlobs {
	by := map[string]*Catalog{}
	get := func(n string) *Catalog {
		if by[n] == nil {
			by[n] = &Catalog{}
		}
		return by[n]
	}
	for _, p := range c.Packages {
		g := get(p.Name)
		g.Packages = append(g.Packages, p)
	}
	for _, ch := range c.Channels {
		g := get(ch.Package)
		g.Channels = append(g.Channels, ch)
	}
	for _, b := range c.Bundles {
		g := get(b.Package)
		g.Bundles = append(g.Bundles, b)
	}
	for _, o := range c.Others {
		g := get(o.Package)
		g.Others = append(g.Others, o)
	}
	names := make([]string, 0, len(by))
	for n := range by {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return packageBefore(names[i], names[j]) })
	out := make([]sortedBlobs, 0, len(names))
	for _, n := range names {
		g := by[n]
		sort.SliceStable(g.Packages, func(i, j int) bool { return g.Packages[i].Name < g.Packages[j].Name })
		sort.SliceStable(g.Channels, func(i, j int) bool { return g.Channels[i].Name < g.Channels[j].Name })
		sort.SliceStable(g.Bundles, func(i, j int) bool { return g.Bundles[i].Name < g.Bundles[j].Name })
		// As upstream: other schemas in schema order (blobs of one schema
		// as given), then olm.deprecations.
		sort.SliceStable(g.Others, func(i, j int) bool {
			a, b := g.Others[i], g.Others[j]
			if (a.Schema == SchemaDeprecations) != (b.Schema == SchemaDeprecations) {
				return b.Schema == SchemaDeprecations
			}
			return a.Schema < b.Schema
		})
		out = append(out, sortedBlobs{name: n, cat: g})
	}
	return out
}

// WriteDirOptions control WriteDir.
type WriteDirOptions struct {
	Format Format
	// Force replaces a destination directory that is not empty.
	Force bool
	// Sources are the local paths the catalog is read from: a DIR that
	// holds one, is one or lies inside one is refused (see
	// atomicfile.CheckApart), with or without Force.
	Sources []string
}

// WriteDir writes the catalog the way upstream `opm migrate` lays it out:
// DIR/<package>/catalog.json (or .yaml), one file per package; blobs of no
// package go to DIR/catalog.json. The tree is written to a temporary
// directory beside DIR and moved into place (an existing DIR is exchanged
// with it in one step, see atomicfile.ReplaceDir), so DIR holds either its
// old content or the whole new catalog. A DIR that exists and is not empty
// is refused unless opts.Force. What killed earlier runs left beside DIR is
// cleaned up first.
func WriteDir(dir string, c *Catalog, opts WriteDirOptions) error {
	dw, err := NewDirWriter(dir, opts)
	if err != nil {
		return err
	}
	defer dw.Abort()
	if err := dw.Add(c); err != nil {
		return err
	}
	return dw.Commit()
}

// DirWriter is WriteDir a package at a time: Add whole packages (each
// once), then Commit moves the tree into place; Abort, or a Commit never
// called, leaves DIR as it was.
type DirWriter struct {
	dir, tmp string
	format   Format
	exists   bool
	done     bool
}

// NewDirWriter checks DIR as WriteDir does and starts the temporary tree.
func NewDirWriter(dir string, opts WriteDirOptions) (*DirWriter, error) {
	format := opts.Format
	if format == "" {
		format = FormatJSON
	}
	if _, err := ParseFormat(string(format)); err != nil {
		return nil, fmt.Errorf("write catalog %s: %w", dir, err)
	}
	dir = filepath.Clean(dir)
	if err := atomicfile.CheckApart(dir, opts.Sources...); err != nil {
		return nil, fmt.Errorf("write catalog: %w", err)
	}
	// What killed writers of dir left: their temporary trees, and the old
	// catalog if one was killed between the two renames of the fallback.
	if _, err := atomicfile.CleanStale(dir); err != nil {
		return nil, fmt.Errorf("write catalog %s: clean up after an earlier run: %w", dir, err)
	}
	if st, err := os.Lstat(dir); err == nil && st.Mode()&os.ModeSymlink != 0 {
		// The tree is moved into place over dir: the link would be
		// replaced, and what it leads to left as it was.
		dest, _ := os.Readlink(dir)
		return nil, fmt.Errorf("write catalog %s: it is a symbolic link to %s; opm writes a catalog directory in place of DIR, not through a link: give the directory itself", dir, dest)
	}
	exists := false
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return nil, fmt.Errorf("write catalog %s: it exists and is not a directory", dir)
		}
		exists = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("write catalog %s: %w", dir, err)
		}
		if len(entries) > 0 && !opts.Force {
			return nil, fmt.Errorf("write catalog %s: the directory is not empty; give an empty or new directory, or force replacing it", dir)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("write catalog %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("write catalog %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, atomicfile.TempPattern(dir, atomicfile.KindTmp))
	if err != nil {
		return nil, fmt.Errorf("write catalog %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("write catalog %s: %w", dir, err)
	}
	return &DirWriter{dir: dir, tmp: tmp, format: format, exists: exists}, nil
}

// Add writes the file of each package of c.
func (dw *DirWriter) Add(c *Catalog) error {
	dir := dw.dir
	for _, g := range c.groupByPackage() {
		sub := filepath.Join(dw.tmp, g.name)
		if g.name != "" {
			if strings.ContainsAny(g.name, `/\`) || g.name == "." || g.name == ".." {
				return fmt.Errorf("write catalog %s: package name %q cannot be a directory name", dir, g.name)
			}
			if err := os.Mkdir(sub, 0o755); err != nil {
				return fmt.Errorf("write catalog %s: %w", dir, err)
			}
		}
		if err := writeFile(filepath.Join(sub, "catalog."+string(dw.format)), g.cat, dw.format); err != nil {
			return fmt.Errorf("write catalog %s: package %s: %w", dir, g.name, err)
		}
	}
	return nil
}

// Abort removes the temporary tree unless Commit moved it into place.
func (dw *DirWriter) Abort() {
	if !dw.done {
		dw.done = true
		os.RemoveAll(dw.tmp)
	}
}

// Commit moves the tree into place.
func (dw *DirWriter) Commit() error {
	if dw.done {
		return fmt.Errorf("write catalog %s: already committed or aborted", dw.dir)
	}
	defer dw.Abort()
	dir, tmp := dw.dir, dw.tmp
	if !dw.exists {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("write catalog %s: %w", dir, err)
		}
		dw.done = true
		return nil
	}
	if err := atomicfile.ReplaceDir(tmp, dir); err != nil {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
	dw.done = true
	return nil
}

func writeFile(name string, c *Catalog, format Format) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if err := Write(f, c, format); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
