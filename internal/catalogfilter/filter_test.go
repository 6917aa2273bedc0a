package catalogfilter

import (
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogdiff"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/shareddata"
	"github.com/opmkit/opm/internal/validate"
)

// graphCatalog: package p, channel stable 1.0.0 -> 1.1.0 -> 1.2.0 -> 1.3.0
// with a branch 1.1.1 (replaces 1.0.0) that 1.2.0 skips; channel fast
// (1.3.0 only; the default channel is stable); a custom blob; package q;
// deprecations of p's 1.0.0 and of fast.
const graphCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"},{"name":"p.v1.1.1","replaces":"p.v1.0.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0","skips":["p.v1.1.1"]},{"name":"p.v1.3.0","replaces":"p.v1.2.0"}]}
{"schema":"olm.channel","name":"fast","package":"p","entries":[{"name":"p.v1.3.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"r/p:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.v1.1.0","package":"p","image":"r/p:1.1.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}}]}
{"schema":"olm.bundle","name":"p.v1.1.1","package":"p","image":"r/p:1.1.1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.1"}}]}
{"schema":"olm.bundle","name":"p.v1.2.0","package":"p","image":"r/p:1.2.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.2.0"}}]}
{"schema":"olm.bundle","name":"p.v1.3.0","package":"p","image":"r/p:1.3.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.3.0"}}]}
{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1.0.0"},"message":"old"},{"reference":{"schema":"olm.channel","name":"fast"},"message":"use stable"}]}
{"schema":"example.com/notes","package":"p","note":"kept with p"}
{"schema":"olm.package","name":"q","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"q","entries":[{"name":"q.v1"}]}
{"schema":"olm.bundle","name":"q.v1","package":"q","image":"r/q:1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}
`

func load(t *testing.T, s string) *fbc.Catalog {
	t.Helper()
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("catalog.json", []byte(s)))
	return c
}

func names(c *fbc.Catalog) []string {
	var out []string
	for _, b := range c.Bundles {
		out = append(out, b.Name)
	}
	sort.Strings(out)
	return out
}

func mustValid(t *testing.T, c *fbc.Catalog) {
	t.Helper()
	for _, f := range fbc.Validate(c) {
		if f.Severity == validate.Error {
			t.Errorf("result does not validate: %s", f.Message)
		}
	}
}

func TestFilterRangeKeepsOneHead(t *testing.T) {
	t.Parallel()
	// 1.0.0-1.1.1: 1.1.0 and 1.1.1 would both be heads; 1.2.0 (replaces
	// 1.1.0, skips 1.1.1) is kept to join them.
	cfg := &Config{Packages: []Package{{Name: "p", Channels: []Channel{{Name: "stable", Range: ">=1.0.0 <1.2.0"}}}}}
	out, rep, err := Filter(load(t, graphCatalog), cfg)
	require.NoError(t, err)
	mustValid(t, out)
	assert.Equal(t, []string{"p.v1.0.0", "p.v1.1.0", "p.v1.1.1", "p.v1.2.0"}, names(out))
	require.Len(t, rep.Extra, 1)
	assert.Equal(t, "p.v1.2.0", rep.Extra[0].Bundle)
	assert.Contains(t, rep.Extra[0].Why, "upgrades p.v1.1")
	require.Len(t, out.Channels, 1)
	assert.Equal(t, []string{"p.v1.2.0"}, graph.Heads(&out.Channels[0]))
	// q went with its bundle; p.v1.3.0 went as outside the range.
	var why []string
	for _, r := range rep.Removed {
		why = append(why, r.Bundle+": "+r.Why)
	}
	assert.Contains(t, why, "q.v1: package not selected")
	assert.Contains(t, why, "p.v1.3.0: outside >=1.0.0 <1.2.0 in channel stable")
	// The fast channel's deprecation went with it; the bundle's stayed;
	// the custom blob of p stayed.
	var others []string
	for _, m := range out.Others {
		others = append(others, string(m.Blob))
	}
	joined := strings.Join(others, "\n")
	assert.Contains(t, joined, `"old"`)
	assert.NotContains(t, joined, "use stable")
	assert.Contains(t, joined, "kept with p")
}

func TestFilterDefaultChannel(t *testing.T) {
	t.Parallel()
	cfg := &Config{Packages: []Package{{Name: "p", Channels: []Channel{{Name: "fast"}}}}}
	_, _, err := Filter(load(t, graphCatalog), cfg)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its default channel stable is filtered out: keep it, or set defaultChannel to one of the channels kept (fast)")

	cfg.Packages[0].DefaultChannel = "fast"
	out, _, err := Filter(load(t, graphCatalog), cfg)
	require.NoError(t, err)
	mustValid(t, out)
	assert.Equal(t, "fast", out.Packages[0].DefaultChannel)

	_, _, err = Filter(load(t, graphCatalog), &Config{Packages: []Package{{Name: "p", Channels: []Channel{{Name: "nope"}}}}})
	assert.ErrorContains(t, err, "package p has no channel nope (its channels: fast, stable)")
	_, _, err = Filter(load(t, graphCatalog), &Config{Packages: []Package{{Name: "gone"}}})
	assert.ErrorContains(t, err, `package "gone" not found`)
}

func TestImageSetConfiguration(t *testing.T) {
	t.Parallel()
	headsOnly := `apiVersion: mirror.openshift.io/v2alpha1
kind: ImageSetConfiguration
mirror:
  operators:
  - catalog: registry.example.com/index:v1
    packages:
    - name: p
    - name: q
`
	cfg, err := ParseConfig("isc.yaml", []byte(headsOnly), "")
	require.NoError(t, err)
	out, _, err := Filter(load(t, graphCatalog), cfg)
	require.NoError(t, err)
	mustValid(t, out)
	assert.Equal(t, []string{"p.v1.3.0", "q.v1"}, names(out), "without full: every channel's head (1.3.0 heads both of p's)")

	ranged := strings.Replace(headsOnly, "    - name: p\n", "    - name: p\n      minVersion: 1.1.0\n      maxVersion: 1.2.0\n", 1)
	cfg, err = ParseConfig("isc.yaml", []byte(ranged), "")
	require.NoError(t, err)
	out, _, err = Filter(load(t, graphCatalog), cfg)
	require.NoError(t, err)
	mustValid(t, out)
	assert.Equal(t, []string{"p.v1.1.0", "p.v1.1.1", "p.v1.2.0", "q.v1"}, names(out), "both ends in, every channel of p (fast keeps nothing in range)")

	two := strings.Replace(headsOnly, "mirror:\n  operators:\n", "mirror:\n  operators:\n  - catalog: other\n    full: true\n", 1)
	_, err = ParseConfig("isc.yaml", []byte(two), "elsewhere")
	assert.ErrorContains(t, err, "lists 2 catalogs (other, registry.example.com/index:v1) and none is elsewhere")

	_, err = ParseConfig("f.yaml", []byte("apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n- name: p\n  channels:\n  - name: stable\n    versionRange: '>>1'\n"), "")
	assert.ErrorContains(t, err, "packages[0].channels[0].versionRange")
	_, err = ParseConfig("f.yaml", []byte("kind: Something\n"), "")
	assert.ErrorContains(t, err, `kind "Something"`)
}

// TestFilterRandomRangesOnRealCatalogs (issue 29): every package of the
// reference catalogs, filtered by random version ranges per channel: the
// result validates, and opm diff from the source shows only removals.
func TestFilterRandomRangesOnRealCatalogs(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	files, err := filepath.Glob(filepath.Join(dir, "*.fbc.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	rnd := rand.New(rand.NewSource(29))
	runs := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		src := load(t, string(data))
		versions, _ := graph.Versions(src)
		for try := 0; try < 8; try++ {
			cfg := &Config{Kind: "test"}
			for _, p := range src.Packages {
				pk := Package{Name: p.Name}
				for _, ch := range src.Channels {
					if ch.Package != p.Name {
						continue
					}
					var vs []string
					for _, e := range ch.Entries {
						if v, ok := versions[e.Name]; ok {
							vs = append(vs, v.String())
						}
					}
					rng := ""
					if len(vs) > 0 && rnd.Intn(4) > 0 {
						lo, hi := vs[rnd.Intn(len(vs))], vs[rnd.Intn(len(vs))]
						rng = ">=" + lo + " <=" + hi + " || >=" + hi + " <=" + lo
					}
					if ch.Name == p.DefaultChannel || rnd.Intn(2) == 0 {
						pk.Channels = append(pk.Channels, Channel{Name: ch.Name, Range: rng})
					}
				}
				cfg.Packages = append(cfg.Packages, pk)
			}
			out, _, err := Filter(src, cfg)
			if err != nil {
				// A range may leave heads no entry joins (a source that
				// branches): that must be said, never written.
				assert.Contains(t, err.Error(), "widen", "%s: %v", file, err)
				continue
			}
			runs++
			mustValid(t, out)
			res, err := catalogdiff.Diff(src, out, catalogdiff.Options{})
			require.NoError(t, err)
			s := res.Summary
			assert.Zero(t, s.PackagesAdded+s.ChannelsAdded+s.BundlesAdded+s.BundlesChanged+s.EdgesAdded+s.DeprecationsAdded+s.DeprecationsChanged,
				"%s: the filter added or changed something: %+v", filepath.Base(file), s)
		}
	}
	t.Logf("%d filtered catalogs from %d reference catalogs validated and only removed", runs, len(files))
	assert.Greater(t, runs, len(files)*4)
}

// TestFilterBrokenSource: a source channel that branches, or that has no
// head at all, is named as the source's fault whatever keeps it whole or
// by its head.
func TestFilterBrokenSource(t *testing.T) {
	t.Parallel()
	branches := one("1.0.0 1.1.0<1.0.0 1.2.0<1.0.0")
	_, _, err := Filter(fixture(t, branches), &Config{Packages: []Package{{Name: "foo"}}})
	assert.ErrorContains(t, err, "package foo: channel ch has 2 heads in the source (foo.v1.2.0, foo.v1.1.0): name the versions to keep")
	_, _, err = Filter(fixture(t, branches), &Config{HeadsOnly: true})
	assert.ErrorContains(t, err, "package foo: channel ch has 2 heads in the source")

	noHead := one("1.0.0<1.1.0 1.1.0<1.0.0")
	_, _, err = Filter(fixture(t, noHead), &Config{HeadsOnly: true})
	assert.ErrorContains(t, err, "package foo: channel ch has no head in the source: every entry is replaced or skipped (a cycle)")
	_, _, err = Filter(fixture(t, noHead), &Config{Packages: []Package{{Name: "foo"}}})
	assert.ErrorContains(t, err, "package foo: channel ch has an upgrade cycle in the source (foo.v1.0.0 → foo.v1.1.0 → foo.v1.0.0)")
}

// TestSelectionMatchesFilter: a catalog handed to a Selection in parts,
// a package spread over several, filters as the whole catalog does, and
// reports the bundles of the packages it did not hold.
func TestSelectionMatchesFilter(t *testing.T) {
	t.Parallel()
	whole := load(t, graphCatalog)
	for _, cfg := range []*Config{
		{Packages: []Package{{Name: "p", Channels: []Channel{{Name: "stable", Range: ">=1.0.0 <1.2.0"}}}}},
		{Packages: []Package{{Name: "q"}}},
		{Kind: "ImageSetConfiguration"}, // no package named: everything
	} {
		want, wantRep, err := Filter(whole, cfg)
		require.NoError(t, err)
		sel := NewSelection(cfg)
		// One blob a part, in the source's order: p's blobs are spread
		// over ten parts, q's over three.
		// (Blank lines before each keep its position in the file.)
		for i, line := range strings.SplitAfter(graphCatalog, "\n") {
			if line != "" {
				require.NoError(t, sel.Add(load(t, strings.Repeat("\n", i)+line)))
			}
		}
		got, rep, err := sel.Filter()
		require.NoError(t, err)
		assert.Equal(t, names(want), names(got))
		assert.Equal(t, want.Channels, got.Channels)
		assert.Equal(t, want.Packages, got.Packages)
		assert.Equal(t, len(want.Others), len(got.Others))
		assert.Equal(t, wantRep, rep)
	}
	// Naming p, q's blobs are not held; its bundle is reported.
	sel := NewSelection(&Config{Packages: []Package{{Name: "p"}}})
	require.NoError(t, sel.Add(whole))
	assert.Len(t, sel.c.Bundles, 5, "only p's bundles are held")
	_, rep, err := sel.Filter()
	require.NoError(t, err)
	assert.Contains(t, rep.Removed, Removal{Package: "q", Bundle: "q.v1", Why: "package not selected"})

	_, _, err = NewSelection(&Config{Packages: []Package{{Name: "gone"}}}).Filter()
	assert.ErrorContains(t, err, `package "gone" not found`)
}

// TestReportCounts: the summary counts in the right number (issue 36).
func TestReportCounts(t *testing.T) {
	r := &Report{Removed: []Removal{{Package: "p", Bundle: "p.v1", Why: "outside"}}}
	assert.Equal(t, "removed 1 bundle, kept 0 outside a range", r.Counts())
	r.Removed = append(r.Removed, Removal{Package: "p", Bundle: "p.v2", Why: "outside"})
	assert.Equal(t, "removed 2 bundles, kept 0 outside a range", r.Counts())
	var b strings.Builder
	require.NoError(t, r.WriteExplain(&b))
	assert.Equal(t, "removed p/p.v1: outside\nremoved p/p.v2: outside\n", b.String())
}
