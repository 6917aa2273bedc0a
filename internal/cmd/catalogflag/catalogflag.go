// Package catalogflag is the repeatable --catalog flag of the commands
// that ask OLM's resolver (alpha resolve, alpha upgrade-path): a catalog
// source, its priority and the name and namespace a CatalogSource (or
// ClusterCatalog) of it would have, opened into resolve.Catalogs.
package catalogflag

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/opmkit/opm/internal/cmd/catalogsource"
	"github.com/opmkit/opm/internal/cmd/factory"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/image"
	"github.com/opmkit/opm/internal/resolve"
)

// Usage is the flag's help text.
const Usage = "a catalog: SOURCE[=PRIORITY], or name=NAME,source=SOURCE[,priority=N][,namespace=NS] (repeatable; SOURCE is a catalog directory, sqlite database or index image; NAME defaults to the source's base name or image repository)"

// Spec is one --catalog value.
type Spec struct {
	Name      string // the CatalogSource's name; "" derives it from Source
	Namespace string // the CatalogSource's namespace; "" is the global one
	Source    string
	Priority  int
}

var trailingPriority = regexp.MustCompile(`^(.+)=(-?[0-9]+)$`)

// Parse reads a --catalog value: SOURCE, SOURCE=PRIORITY, or keys
// name=,source=,priority=,namespace= separated by commas (image
// references and ordinary paths hold neither "=" nor ","; an existing
// path is always a source).
func Parse(v string) (Spec, error) {
	if v == "" {
		return Spec{}, fmt.Errorf("--catalog: empty: write SOURCE[=PRIORITY] or name=NAME,source=SOURCE[,priority=N][,namespace=NS]")
	}
	if exists(v) {
		return Spec{Source: v}, nil
	}
	if k, _, _ := strings.Cut(v, "="); k == "name" || k == "source" || k == "priority" || k == "namespace" {
		return parseKeys(v)
	}
	if m := trailingPriority.FindStringSubmatch(v); m != nil {
		p, err := strconv.Atoi(m[2])
		if err != nil {
			return Spec{}, fmt.Errorf("%q: priority %s: %w", v, m[2], err)
		}
		return Spec{Source: m[1], Priority: p}, nil
	}
	if strings.Contains(v, "=") {
		return Spec{}, fmt.Errorf("%q: what follows = is not a whole number (the priority); write SOURCE[=PRIORITY] or name=NAME,source=SOURCE[,priority=N][,namespace=NS]", v)
	}
	return Spec{Source: v}, nil
}

func parseKeys(v string) (Spec, error) {
	var s Spec
	seen := map[string]bool{}
	for _, kv := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(kv, "=")
		if !ok || val == "" {
			return Spec{}, fmt.Errorf("%q: %q is not KEY=VALUE", v, kv)
		}
		if seen[k] {
			return Spec{}, fmt.Errorf("%q: %s given twice", v, k)
		}
		seen[k] = true
		switch k {
		case "name":
			if !validName(val) {
				return Spec{}, fmt.Errorf("%q: name %q is not a valid CatalogSource name (lower-case letters, digits, '-' and '.', starting and ending with a letter or digit)", v, val)
			}
			s.Name = val
		case "namespace":
			s.Namespace = val
		case "source":
			s.Source = val
		case "priority":
			p, err := strconv.Atoi(val)
			if err != nil {
				return Spec{}, fmt.Errorf("%q: priority %q is not a whole number", v, val)
			}
			s.Priority = p
		default:
			return Spec{}, fmt.Errorf("%q: unknown key %q (keys: name, source, priority, namespace)", v, k)
		}
	}
	if s.Source == "" {
		return Spec{}, fmt.Errorf("%q: no source=", v)
	}
	return s, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

var nameRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$`)

func validName(s string) bool { return nameRe.MatchString(s) }

// NameOf is the CatalogSource name a source gets when none is given: a
// path's base name without its extension, an image's repository's last
// component, lower-cased, with what a name cannot hold turned to '-'.
func NameOf(source string) string {
	base := source
	if exists(source) {
		base = filepath.Base(filepath.Clean(source))
		if ext := filepath.Ext(base); ext == ".db" || ext == ".sqlite" || ext == ".sqlite3" {
			base = strings.TrimSuffix(base, ext)
		}
	} else {
		base, _, _ = strings.Cut(base, "@")
		if i := strings.LastIndex(base, "/"); i >= 0 {
			base = base[i+1:]
		}
		base, _, _ = strings.Cut(base, ":")
	}
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-.")
	if len(name) > 63 {
		name = strings.Trim(name[:63], "-.")
	}
	if name == "" {
		name = "catalog"
	}
	return name
}

// Named gives each spec its name (NameOf its source when none is given);
// two derived names alike get -2, -3... in the order given, and two
// catalogs named alike in one namespace are refused.
func Named(specs []Spec) ([]Spec, error) {
	out := make([]Spec, len(specs))
	taken := map[string]int{}
	for i, s := range specs {
		if s.Name != "" {
			key := s.Namespace + "/" + s.Name
			if taken[key] > 0 {
				return nil, fmt.Errorf("--catalog: two catalogs are named %s in namespace %q: give each its own name=", s.Name, s.Namespace)
			}
			taken[key] = 1
		}
		out[i] = s
	}
	for i, s := range out {
		if s.Name != "" {
			continue
		}
		name := NameOf(s.Source)
		for n := 2; taken[s.Namespace+"/"+name] > 0; n++ {
			name = fmt.Sprintf("%s-%d", NameOf(s.Source), n)
		}
		taken[s.Namespace+"/"+name] = 1
		out[i].Name = name
	}
	return out, nil
}

// Open loads each catalog (as upgrade-path and render read sources) into
// a resolve.Catalog, named by Named; warnings about what rendering
// filled in are handed to warn.
func Open(ctx context.Context, f *factory.Factory, opts image.Options, specs []Spec, warn func(source, msg string)) ([]resolve.Catalog, error) {
	specs, err := Named(specs)
	if err != nil {
		return nil, err
	}
	o := catalogsource.NewOpener(f, opts, fbc.RenderOptions{})
	out := make([]resolve.Catalog, 0, len(specs))
	for _, s := range specs {
		c, err := o.Open(ctx, s.Source, catalogsource.Catalogs...)
		if err != nil {
			return nil, fmt.Errorf("--catalog %s: %w", s.Source, err)
		}
		for _, w := range c.Warnings {
			if warn != nil {
				warn(s.Source, w)
			}
		}
		out = append(out, resolve.Catalog{Name: s.Name, Namespace: s.Namespace, Priority: s.Priority, Catalog: c.Catalog})
	}
	return out, nil
}

// Value is the flag: a repeatable --catalog into a []Spec, checked as it
// is parsed.
type Value struct{ Specs *[]Spec }

func (v Value) String() string {
	if v.Specs == nil {
		return ""
	}
	var s []string
	for _, sp := range *v.Specs {
		s = append(s, sp.Source)
	}
	return strings.Join(s, ",")
}

// Set parses one --catalog value.
func (v Value) Set(s string) error {
	sp, err := Parse(s)
	if err != nil {
		return err
	}
	*v.Specs = append(*v.Specs, sp)
	return nil
}

// Type names the value in help.
func (v Value) Type() string { return "catalog" }
