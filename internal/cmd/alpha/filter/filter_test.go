package filter_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/blang/semver/v4"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/shareddata"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestFilterCommand (issue 29, item 1): a FilterConfiguration on a real
// sqlite database, to stdout and to a directory; --keep-packages;
// --explain; a filtered-out default channel refused with nothing written.
func TestFilterCommand(t *testing.T) {
	t.Parallel()
	db := shareddata.Require(t, "reference", "index", "etcd.replaces.db")
	o := cmdtest.New(t)
	cfg := filepath.Join(t.TempDir(), "filter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(`apiVersion: olm.operatorframework.io/v1alpha1
kind: FilterConfiguration
packages:
- name: etcd
  channels:
  - name: singlenamespace-alpha
    versionRange: ">=0.9.0 <0.9.4"
`), 0o644))
	r := o.Run("alpha", "filter", db, "--config", cfg, "--explain")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("out.json", []byte(r.Out)))
	require.Len(t, c.Bundles, 2)
	require.Len(t, c.Channels, 1)
	assert.Equal(t, "singlenamespace-alpha", c.Channels[0].Name)
	assert.Contains(t, r.ErrOut, "removed etcd/etcdoperator.v0.9.4: outside >=0.9.0 <0.9.4 in channel singlenamespace-alpha\n")
	assert.Contains(t, r.ErrOut, "kept 1 package, 1 channel, 2 bundles (4 removed, 0 kept outside a range)\n")

	out := filepath.Join(t.TempDir(), "filtered")
	r = o.Run("alpha", "filter", db, "--keep-packages", "etcd", "--output-dir", out, "-o", "yaml")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	v := o.Run("validate", out)
	assert.Equal(t, exit.OK, v.Code, v.ErrOut)

	bad := strings.Replace(strings.Replace(mustRead(t, cfg), "singlenamespace-alpha", "alpha", 1), `    versionRange: ">=0.9.0 <0.9.4"`+"\n", "", 1)
	require.NoError(t, os.WriteFile(cfg, []byte(bad), 0o644))
	r = o.Run("alpha", "filter", db, "--config", cfg)
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "is filtered out: keep it, or set defaultChannel to one of the channels kept (alpha)")
	assert.Contains(t, r.ErrOut, "nothing was written")
	assert.Empty(t, r.Out)

	r = o.Run("alpha", "filter", db)
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "give --config FILE or --keep-packages")
}

// TestFilterCatalogDirInParts: a catalog directory is read a top-level
// directory at a time, holding only the packages named; a package spread
// over several directories filters as when it is in one file.
func TestFilterCatalogDirInParts(t *testing.T) {
	t.Parallel()
	blobs := map[string]string{
		"pkg": `{"schema":"olm.package","name":"p","defaultChannel":"stable"}`,
		"ch":  `{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"},{"name":"p.v2","replaces":"p.v1"},{"name":"p.v3","replaces":"p.v2"}]}`,
		"b1":  `{"schema":"olm.bundle","name":"p.v1","package":"p","image":"r/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}`,
		"b2":  `{"schema":"olm.bundle","name":"p.v2","package":"p","image":"r/p:2","properties":[{"type":"olm.package","value":{"packageName":"p","version":"2.0.0"}}]}`,
		"b3":  `{"schema":"olm.bundle","name":"p.v3","package":"p","image":"r/p:3","properties":[{"type":"olm.package","value":{"packageName":"p","version":"3.0.0"}}]}`,
		"dep": `{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v1"},"message":"old"}]}`,
		"q":   `{"schema":"olm.package","name":"q","defaultChannel":"stable"}` + "\n" + `{"schema":"olm.channel","name":"stable","package":"q","entries":[{"name":"q.v1"}]}` + "\n" + `{"schema":"olm.bundle","name":"q.v1","package":"q","image":"r/q:1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}`,
	}
	write := func(dir string, files map[string][]string) {
		for name, keys := range files {
			var lines []string
			for _, k := range keys {
				lines = append(lines, blobs[k])
			}
			require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
		}
	}
	whole, parts := t.TempDir(), t.TempDir()
	write(whole, map[string][]string{"p/catalog.json": {"pkg", "ch", "b1", "b2", "b3", "dep"}, "q/catalog.json": {"q"}})
	write(parts, map[string][]string{"a/catalog.json": {"b3", "ch"}, "b/catalog.json": {"b1", "q"}, "c/x/catalog.json": {"dep", "b2"}, "root.json": {"pkg"}})
	cfg := filepath.Join(t.TempDir(), "filter.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte("apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n- name: p\n  channels:\n  - name: stable\n    versionRange: '>=2.0.0'\n"), 0o644))
	o := cmdtest.New(t)
	want := o.Run("alpha", "filter", whole, "--config", cfg, "--explain")
	require.Equal(t, exit.OK, want.Code, want.ErrOut)
	assert.Contains(t, want.ErrOut, "removed q/q.v1: package not selected\n")
	assert.Contains(t, want.ErrOut, "removed p/p.v1: outside >=2.0.0 in channel stable\n")
	assert.Contains(t, want.ErrOut, "kept 1 package, 1 channel, 2 bundles (2 removed, 0 kept outside a range)\n")
	assert.NotContains(t, want.Out, "deprecations", "the deprecation of p.v1 went with it")
	got := o.Run("alpha", "filter", parts, "--config", cfg, "--explain")
	require.Equal(t, exit.OK, got.Code, got.ErrOut)
	assert.Equal(t, want.Out, got.Out)
	assert.Equal(t, want.ErrOut, got.ErrOut)
}

func mustRead(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(b)
}

// TestFilterCommandAnchorRules (issue 29): the command as the anchors'
// cases fixed it: an ImageSetConfiguration without packages keeps every
// channel's head, one mixing full: true and a range is refused as bad
// input, and a source channel with a cycle is named as the source's fault,
// not the filter's, with nothing written.
func TestFilterCommandAnchorRules(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "catalog")
	require.NoError(t, os.MkdirAll(src, 0o755))
	bundle := func(v string) string {
		return `{"schema":"olm.bundle","name":"p.v` + v + `","package":"p","image":"example.com/p:` + v + `","properties":[{"type":"olm.package","value":{"packageName":"p","version":"` + v + `"}}]}` + "\n"
	}
	catalog := `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}]}
{"schema":"olm.channel","name":"fast","package":"p","entries":[{"name":"p.v1.1.0"},{"name":"p.v1.2.0","replaces":"p.v1.1.0"}]}
` + bundle("1.0.0") + bundle("1.1.0") + bundle("1.2.0")
	require.NoError(t, os.WriteFile(filepath.Join(src, "catalog.json"), []byte(catalog), 0o644))

	isc := filepath.Join(dir, "isc.yaml")
	require.NoError(t, os.WriteFile(isc, []byte("apiVersion: mirror.openshift.io/v2alpha1\nkind: ImageSetConfiguration\nmirror:\n  operators:\n  - catalog: example.com/index:v1\n"), 0o644))
	r := o.Run("alpha", "filter", src, "--config", isc)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("out.json", []byte(r.Out)))
	heads := map[string][]string{}
	for _, ch := range c.Channels {
		for _, e := range ch.Entries {
			heads[ch.Name] = append(heads[ch.Name], e.Name)
		}
	}
	assert.Equal(t, map[string][]string{"stable": {"p.v1.1.0"}, "fast": {"p.v1.2.0"}}, heads, "the head of every channel")

	require.NoError(t, os.WriteFile(isc, []byte(mustRead(t, isc)+"    full: true\n    packages:\n    - name: p\n      minVersion: 1.1.0\n"), 0o644))
	r = o.Run("alpha", "filter", src, "--config", isc)
	// Bad input; status 1 on opm alpha's paths, as upstream opm's.
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "isc.yaml: packages[0] (p): minVersion/maxVersion with full: true")

	cyclic := strings.Replace(catalog, `{"name":"p.v1.0.0"},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}`, `{"name":"p.v1.0.0","skips":["p.v1.1.0"]},{"name":"p.v1.1.0","replaces":"p.v1.0.0"}`, 1)
	require.NotEqual(t, catalog, cyclic)
	require.NoError(t, os.WriteFile(filepath.Join(src, "catalog.json"), []byte(cyclic), 0o644))
	out := filepath.Join(dir, "out")
	r = o.Run("alpha", "filter", src, "--keep-packages", "p", "--output-dir", out)
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "package p: channel stable has an upgrade cycle in the source (p.v1.0.0 → p.v1.1.0 → p.v1.0.0)")
	assert.Contains(t, r.ErrOut, "nothing was written")
	assert.NotContains(t, r.ErrOut, "a bug in the filter")
	assert.NoDirExists(t, out)
}

// TestFilterRefusesLinkedOutputDir (issue 40, item 4): an --output-dir
// that is a symbolic link is refused, naming it: the catalog directory is
// moved into place over it, so the link would go and the directory it
// leads to keep what it had. Nothing changes on either side.
func TestFilterRefusesLinkedOutputDir(t *testing.T) {
	t.Parallel()
	src := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(src, "catalog.json"), []byte(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"}]}
{"schema":"olm.bundle","name":"p.v1","package":"p","image":"r/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`), 0o644))
	outside := t.TempDir()
	link := filepath.Join(t.TempDir(), "out")
	require.NoError(t, os.Symlink(outside, link))
	r := cmdtest.New(t).Run("alpha", "filter", src, "--keep-packages", "p", "--output-dir", link, "--force")
	assert.NotEqual(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, link+": it is a symbolic link to "+outside)
	dest, err := os.Readlink(link)
	require.NoError(t, err)
	assert.Equal(t, outside, dest)
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Empty(t, entries)
}

// TestFilteredReferenceCatalogsValidate (issue 36, item 2): each reference
// catalog filtered to the middle half of its default channel passes
// `opm validate --fail-on warning` whenever its source does, and gets no
// finding of a rule its source lacks but the one note of
// catalog-channel-edge: upgrades from the bundles filtered out.
func TestFilteredReferenceCatalogsValidate(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	files, err := filepath.Glob(filepath.Join(dir, "*.fbc.json"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	o := cmdtest.New(t)
	notes := 0
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".fbc.json")
		src := filepath.Join(t.TempDir(), "src")
		require.NoError(t, os.MkdirAll(src, 0o755))
		data := mustRead(t, file)
		require.NoError(t, os.WriteFile(filepath.Join(src, "catalog.json"), []byte(data), 0o644))
		c := &fbc.Catalog{}
		require.NoError(t, c.LoadFile(file, []byte(data)))
		versions, _ := graph.Versions(c)
		cfg := "apiVersion: olm.operatorframework.io/v1alpha1\nkind: FilterConfiguration\npackages:\n"
		for _, p := range c.Packages {
			var vs []semver.Version
			for _, ch := range c.Channels {
				if ch.Package == p.Name && ch.Name == p.DefaultChannel {
					for _, e := range ch.Entries {
						vs = append(vs, versions[e.Name])
					}
				}
			}
			semver.Sort(vs)
			lo, hi := vs[len(vs)/4], vs[max(len(vs)/4, 3*len(vs)/4-1)]
			cfg += fmt.Sprintf("- name: %s\n  channels:\n  - name: %s\n    versionRange: '>=%s <=%s'\n", p.Name, p.DefaultChannel, lo, hi)
		}
		cfgFile := filepath.Join(t.TempDir(), "filter.yaml")
		require.NoError(t, os.WriteFile(cfgFile, []byte(cfg), 0o644))
		out := filepath.Join(t.TempDir(), "out")
		r := o.Run("alpha", "filter", src, "--config", cfgFile, "--output-dir", out)
		require.Equal(t, exit.OK, r.Code, "%s: %s", name, r.ErrOut)

		rules := func(dir string) (map[string]bool, int) {
			v := o.Run("validate", dir, "--fail-on", "warning", "-o", "json")
			var doc struct {
				Bundles []struct {
					Findings []struct{ Rule, Severity string }
				}
			}
			require.NoError(t, json.Unmarshal([]byte(v.Out), &doc), "%s: %s", name, v.ErrOut)
			got := map[string]bool{}
			for _, b := range doc.Bundles {
				for _, f := range b.Findings {
					got[f.Rule+" "+f.Severity] = true
				}
			}
			return got, v.Code
		}
		before, beforeCode := rules(src)
		after, afterCode := rules(out)
		assert.Equal(t, beforeCode, afterCode, "%s: opm validate --fail-on warning: source %d, filtered %d (%v)", name, beforeCode, afterCode, after)
		for f := range after {
			if f == "catalog-channel-edge info" {
				notes++
				continue
			}
			assert.True(t, before[f], "%s: the filtered catalog has %s, its source not", name, f)
		}
	}
	assert.Greater(t, notes, len(files)/2, "the filtered-out bundles are noted where edges lead to them")
}
