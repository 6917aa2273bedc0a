package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/internal/fbc"
)

// benchPackages × benchVersions bundles: the 5,000-bundle catalog.
const (
	benchPackages = 250
	benchVersions = 20
)

// writeBenchCatalog writes a catalog of packages p000..p249, each a
// channel of 20 versions (replaces chain, every fifth version with a
// skipRange), each bundle providing its package's API; dependencies:
// package i requires package i+1 (olm.package.required, from version 5 on
// a version range only its newer half meets), every third package the
// API of package i+2 (olm.gvk.required), every seventh an olm.constraint
// (cel) on package i+3.
func writeBenchCatalog(tb testing.TB, dir string) {
	tb.Helper()
	f, err := os.Create(filepath.Join(dir, "catalog.json"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	put := func(v any) {
		if err := enc.Encode(v); err != nil {
			tb.Fatal(err)
		}
	}
	name := func(i int) string { return fmt.Sprintf("p%03d", i) }
	prop := func(typ string, v any) fbc.Property {
		raw, _ := json.Marshal(v)
		return fbc.Property{Type: typ, Value: raw}
	}
	for i := 0; i < benchPackages; i++ {
		pkg := name(i)
		put(fbc.Package{Schema: fbc.SchemaPackage, Name: pkg, DefaultChannel: "stable"})
		ch := fbc.Channel{Schema: fbc.SchemaChannel, Name: "stable", Package: pkg}
		for v := 0; v < benchVersions; v++ {
			e := fbc.ChannelEntry{Name: fmt.Sprintf("%s.v1.%d.0", pkg, v)}
			if v > 0 {
				e.Replaces = fmt.Sprintf("%s.v1.%d.0", pkg, v-1)
			}
			if v > 0 && v%5 == 0 {
				e.SkipRange = fmt.Sprintf(">=1.%d.0 <1.%d.0", v-5, v)
			}
			ch.Entries = append(ch.Entries, e)
		}
		put(ch)
		for v := 0; v < benchVersions; v++ {
			props := []fbc.Property{
				prop(fbc.PropertyPackage, fbc.PackageValue{PackageName: pkg, Version: fmt.Sprintf("1.%d.0", v)}),
				prop(fbc.PropertyGVK, fbc.GVKValue{Group: pkg + ".example.com", Kind: "Thing", Version: "v1"}),
			}
			if i+1 < benchPackages {
				rng := ">=1.0.0"
				if v >= 5 {
					rng = fmt.Sprintf(">=1.%d.0", benchVersions/2)
				}
				props = append(props, prop(fbc.PropertyPackageRequired, fbc.PackageRequiredValue{PackageName: name(i + 1), VersionRange: rng}))
			}
			if i%3 == 0 && i+2 < benchPackages {
				props = append(props, prop(fbc.PropertyGVKRequired, fbc.GVKValue{Group: name(i+2) + ".example.com", Kind: "Thing", Version: "v1"}))
			}
			if i%7 == 0 && i+3 < benchPackages {
				rule := fmt.Sprintf(`properties.exists(p, p.type == "olm.package" && p.value.packageName == %q && semver_compare(p.value.version, "1.3.0") >= 0)`, name(i+3))
				props = append(props, prop(fbc.PropertyConstraint, map[string]any{"cel": map[string]string{"rule": rule}}))
			}
			put(fbc.Bundle{Schema: fbc.SchemaBundle, Name: fmt.Sprintf("%s.v1.%d.0", pkg, v), Package: pkg,
				Image: fmt.Sprintf("example.com/%s:1.%d.0", pkg, v), Properties: props})
		}
	}
}

// benchQuestions: 100 questions over the catalog, fresh Subscriptions and
// upgrades from a middle version, with the chain of dependencies below
// each package.
func benchQuestions(c *fbc.Catalog) []Question {
	var qs []Question
	for k := 0; k < 100; k++ {
		i := (k * 37) % benchPackages
		sub := Subscription{Package: fmt.Sprintf("p%03d", i), Channel: "stable", Catalog: "bench"}
		q := Question{Namespace: "operators", Catalogs: []Catalog{{Name: "bench", Catalog: c}}}
		if k%2 == 1 {
			sub.InstalledCSV = fmt.Sprintf("p%03d.v1.%d.0", i, benchVersions/2)
		}
		q.Subscriptions = []Subscription{sub}
		qs = append(qs, q)
	}
	return qs
}

// BenchmarkResolve: loading the 5,000-bundle catalog, then one question
// at a time (100 different ones, round robin), cold (the catalog's index
// built for each) and warm. A question must cost less than the load.
func BenchmarkResolve(b *testing.B) {
	dir := b.TempDir()
	writeBenchCatalog(b, dir)
	b.Run("load", func(b *testing.B) {
		for b.Loop() {
			if _, err := fbc.LoadDir(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	c, err := fbc.LoadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	if len(c.Bundles) != benchPackages*benchVersions {
		b.Fatalf("catalog has %d bundles", len(c.Bundles))
	}
	qs := benchQuestions(c)
	// A one-shot run (opm alpha resolve): the catalog's index is built for
	// the question, as a copy of the catalog is new to the cache.
	b.Run("question-cold", func(b *testing.B) {
		i := 0
		for b.Loop() {
			fresh := *c
			q := qs[i%len(qs)]
			q.Catalogs = []Catalog{{Name: "bench", Catalog: &fresh}}
			if _, err := Resolve(context.Background(), q); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	// Many questions in one process: the index is built once.
	b.Run("question", func(b *testing.B) {
		i := 0
		for b.Loop() {
			a, err := Resolve(context.Background(), qs[i%len(qs)])
			if err != nil || len(a.Operators) == 0 {
				b.Fatalf("question %d: %v %+v", i, err, a)
			}
			i++
		}
	})
}

// The benchmark's questions resolve: every fresh Subscription gets a
// bundle and its chain of dependencies.
func TestBenchQuestionsResolve(t *testing.T) {
	dir := t.TempDir()
	writeBenchCatalog(t, dir)
	c, err := fbc.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for k, q := range benchQuestions(c)[:6] {
		a, err := Resolve(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if a.Unsatisfiable || a.Operators[0].Bundle == nil && q.Subscriptions[0].InstalledCSV == "" {
			t.Fatalf("question %d: %s", k, reasonsText(a))
		}
		if q.Subscriptions[0].InstalledCSV == "" && q.Subscriptions[0].Package != fmt.Sprintf("p%03d", benchPackages-1) && len(a.Operators) < 2 {
			t.Errorf("question %d: no dependencies: %s", k, reasonsText(a))
		}
	}
}
