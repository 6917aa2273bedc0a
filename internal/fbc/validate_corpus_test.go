package fbc

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/index"
	"github.com/opmkit/opm/internal/validate"
)

// TestValidateRenderedCorpus renders every real bundle of the shared corpus
// (RenderBundle, with their published image references), puts each
// package's bundles in one channel in version order, and validates: the
// upstream-parity rules (pull specs, release naming, unique versions,
// substitutesFor, ...) find nothing in published bundles.
func TestValidateRenderedCorpus(t *testing.T) {
	pkgs := map[string]bool{}
	for _, lb := range corpusRefs(t) {
		pkgs[lb] = true
	}
	total := 0
	for pkg := range pkgs {
		lbs := corpusPackage(t, pkg)
		c := &Catalog{Packages: []Package{{Schema: SchemaPackage, Name: pkg, DefaultChannel: "all"}}}
		type vb struct {
			v index.Version
			b Bundle
		}
		var all []vb
		for _, lb := range lbs {
			b, err := RenderBundle(lb.Bundle, lb.BundlePath, RenderOptions{})
			if err != nil {
				t.Fatalf("%s: %v", pkg, err)
			}
			_, pv, ok := packageProp(b)
			if !ok {
				t.Fatalf("%s: bundle %s has no olm.package", pkg, b.Name)
			}
			v, err := index.ParseVersion(pv.Version, pv.Release)
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			all = append(all, vb{v, *b})
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].v.Compare(all[j].v) < 0 })
		ch := Channel{Schema: SchemaChannel, Name: "all", Package: pkg}
		for i, x := range all {
			e := ChannelEntry{Name: x.b.Name}
			if i > 0 {
				e.Replaces = all[i-1].b.Name
			}
			ch.Entries = append(ch.Entries, e)
			c.Bundles = append(c.Bundles, x.b)
		}
		c.Channels = []Channel{ch}
		for _, f := range Validate(c) {
			if f.Severity == validate.Error {
				t.Errorf("%s: %s %s: %s", pkg, f.Rule, f.Field, f.Message)
			}
		}
		total += len(all)
	}
	if total < 100 {
		t.Errorf("validated %d bundles; the corpus has more", total)
	}
	t.Logf("validated %d rendered bundles of %d packages", total, len(pkgs))
}

// corpusRefs lists the packages of bundle-refs.tsv, one name per bundle.
func corpusRefs(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sharedDir(t), "reference", "index", "bundle-refs.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if cols := strings.Split(line, "\t"); len(cols) >= 3 {
			out = append(out, cols[0])
		}
	}
	return out
}
