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
	bw := bufio.NewWriterSize(w, 64<<10)
	var enc func(v any) error
	switch format {
	case FormatJSON, "":
		je := json.NewEncoder(bw)
		je.SetIndent("", "    ")
		je.SetEscapeHTML(false)
		enc = je.Encode
	case FormatYAML:
		var buf bytes.Buffer
		je := json.NewEncoder(&buf)
		je.SetEscapeHTML(false)
		enc = func(v any) error {
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
		return fmt.Errorf("write catalog: unknown format %q", format)
	}
	for _, p := range c.groupByPackage() {
		for _, v := range p.blobs() {
			if err := enc(v); err != nil {
				return fmt.Errorf("write catalog: %w", err)
			}
		}
	}
	return bw.Flush()
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
	// Blobs of no package come after every package, as upstream writes them.
	sort.Slice(names, func(i, j int) bool {
		if (names[i] == "") != (names[j] == "") {
			return names[j] == ""
		}
		return names[i] < names[j]
	})
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
	format := opts.Format
	if format == "" {
		format = FormatJSON
	}
	if _, err := ParseFormat(string(format)); err != nil {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
	dir = filepath.Clean(dir)
	// What killed writers of dir left: their temporary trees, and the old
	// catalog if one was killed between the two renames of the fallback.
	if _, err := atomicfile.CleanStale(dir); err != nil {
		return fmt.Errorf("write catalog %s: clean up after an earlier run: %w", dir, err)
	}
	exists := false
	if st, err := os.Stat(dir); err == nil {
		if !st.IsDir() {
			return fmt.Errorf("write catalog %s: it exists and is not a directory", dir)
		}
		exists = true
		entries, err := os.ReadDir(dir)
		if err != nil {
			return fmt.Errorf("write catalog %s: %w", dir, err)
		}
		if len(entries) > 0 && !opts.Force {
			return fmt.Errorf("write catalog %s: the directory is not empty; give an empty or new directory, or force replacing it", dir)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp(parent, atomicfile.TempPattern(dir, atomicfile.KindTmp))
	if err != nil {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
	for _, g := range c.groupByPackage() {
		sub := filepath.Join(tmp, g.name)
		if g.name != "" {
			if strings.ContainsAny(g.name, `/\`) || g.name == "." || g.name == ".." {
				return fmt.Errorf("write catalog %s: package name %q cannot be a directory name", dir, g.name)
			}
			if err := os.Mkdir(sub, 0o755); err != nil {
				return fmt.Errorf("write catalog %s: %w", dir, err)
			}
		}
		if err := writeFile(filepath.Join(sub, "catalog."+string(format)), g.cat, format); err != nil {
			return fmt.Errorf("write catalog %s: package %s: %w", dir, g.name, err)
		}
	}
	if !exists {
		if err := os.Rename(tmp, dir); err != nil {
			return fmt.Errorf("write catalog %s: %w", dir, err)
		}
		return nil
	}
	if err := atomicfile.ReplaceDir(tmp, dir); err != nil {
		return fmt.Errorf("write catalog %s: %w", dir, err)
	}
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
