package diff_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/diff"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/internal/shareddata"
)

const (
	oldDir = "../../catalogdiff/testdata/old"
	newDir = "../../catalogdiff/testdata/new"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

// TestDiffJSONDocument: -o json is the document docs/diff.md describes
// (testdata/want.json, every kind of change), with --exit-code's statuses.
func TestDiffJSONDocument(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("diff", oldDir, newDir, "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	golden := filepath.Join("testdata", "want.json")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(golden, []byte(r.Out), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), r.Out, "UPDATE_GOLDEN=1 rewrites %s; review the change and docs/diff.md", golden)
	assert.Empty(t, r.ErrOut)

	r = o.Run("diff", oldDir, newDir, "-o", "json", "--exit-code")
	assert.Equal(t, exit.Failed, r.Code, "different: 1, as git diff --exit-code")
	assert.Equal(t, string(want), r.Out, "the document is printed all the same")
	r = o.Run("diff", oldDir, oldDir, "-o", "json", "--exit-code")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	var doc map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	assert.Equal(t, true, doc["equal"])
	assert.Equal(t, []any{}, doc["packages"])
}

func TestDiffText(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("diff", oldDir, newDir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	for _, line := range []string{
		"a (changed)\n",
		"├── default channel: stable → candidate\n",
		"│   └── ~ a.v3: image r/a:3 → r/a:3-fixed\n",
		"│   ├── + edge a.v1 → a.v4 (skipRange <2.0.0)\n",
		"│   ├── - edge a.v2 → a.v3 (replaces)\n",
		"│   └── ! unreachable a.v2 (no upgrade path to the head)\n",
		"    └── ~ olm.bundle a.v1: \"old\" → \"very old\"\n",
		"gone (removed)\n",
		"new (added)\n",
	} {
		assert.Contains(t, r.Out, line)
	}
	assert.NotContains(t, r.Out, "\x1b[", "no colour when stdout is not a terminal")
	assert.True(t, strings.HasSuffix(r.Out, "1 deprecation(s) reworded\n"), r.Out)

	r = o.RunTTY("diff", oldDir, newDir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "\x1b[", "colour on a terminal")
	o.Env["NO_COLOR"] = "1"
	r = o.RunTTY("diff", oldDir, newDir)
	assert.NotContains(t, r.Out, "\x1b[", "NO_COLOR")

	r = o.Run("diff", oldDir, oldDir)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, oldDir+" → "+oldDir+"\nno differences\n", r.Out)

	r = o.Run("diff", oldDir, newDir, "--package", "gone,nosuch")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "gone (removed)")
	assert.NotContains(t, r.Out, "a (changed)")
	assert.Contains(t, r.ErrOut, "--package nosuch: in neither catalog")
}

func TestDiffMarkdown(t *testing.T) {
	t.Parallel()
	r := cmdtest.New(t).Run("diff", oldDir, newDir, "-o", "markdown")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "### Catalog diff: `"+oldDir+"` → `"+newDir+"`\n\n**1 package(s) added"), r.Out)
	assert.Contains(t, r.Out, "| `a` | changed | 1/0/1 | 1 | 3/1 | 1 | 1 |\n")
	assert.Contains(t, r.Out, "  - ➕ edge `a.v1` → `a.v4` (skipRange `<2.0.0`)\n")
	assert.Contains(t, r.Out, "<details><summary><code>gone</code> (removed)</summary>")
}

func TestDiffErrors(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	missing := filepath.Join(t.TempDir(), "nope")
	r := o.Run("diff", oldDir, missing, "--exit-code")
	assert.Equal(t, exit.Usage, r.Code, "an unreadable source is 2, never 1 (which means different)")
	assert.Contains(t, r.ErrOut, missing)
	assert.Empty(t, r.Out)
	broken := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(broken, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(broken, "p", "catalog.json"), []byte(`{"schema":"olm.package","name":`), 0o644))
	r = o.Run("diff", broken, newDir, "--exit-code")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "p/catalog.json:1")
	assert.Contains(t, r.ErrOut, "opm validate")
	assert.Empty(t, r.Out)
	r = o.Run("diff", oldDir, "../../../testdata/bundles/valid")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "is a bundle directory")
	r = o.Run("diff", oldDir, newDir, "-o", "yaml")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "text, json, markdown or html")
	r = o.Run("diff", oldDir)
	assert.Equal(t, exit.Usage, r.Code)

	opts, err := cmdtest.Parse(t, diff.NewCmd, "a", "b", "--package", "x,y", "--package", "z", "--exit-code", "-o", "markdown")
	require.NoError(t, err)
	assert.Equal(t, []string{"x", "y", "z"}, opts.Packages)
	assert.True(t, opts.ExitCode)
	assert.Equal(t, "a", opts.Old)
}

// TestDiffMixedSources: a sqlite database, its upstream render as an FBC
// directory, and images of both in a registry are the same catalog in
// every pairing; against a pruned copy each pairing reports the same.
func TestDiffMixedSources(t *testing.T) {
	t.Parallel()
	ref := shareddata.Require(t, "reference", "index")
	reg := registrytest.Start(t)
	o := cmdtest.New(t)
	db := filepath.Join(ref, "skupper-operator.replaces.db")
	dir := filepath.Join(t.TempDir(), "catalog")
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "skupper-operator"), 0o755))
	data, err := os.ReadFile(filepath.Join(ref, "skupper-operator.replaces.fbc.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "skupper-operator", "catalog.json"), data, 0o644))
	catalogtest.PushDatabase(t, db, reg.Ref("skupper-sqlite:1"))
	catalogtest.PushCatalog(t, dir, reg.Ref("skupper-fbc:1"))
	sources := []string{db, dir, reg.Ref("skupper-sqlite:1"), reg.Ref("skupper-fbc:1")}
	for _, a := range sources {
		for _, b := range sources {
			r := o.Run("diff", a, b, "--use-http", "--exit-code")
			assert.Equal(t, exit.OK, r.Code, "%s vs %s: %s%s", a, b, r.Out, r.ErrOut)
		}
	}

	semver := filepath.Join(ref, "skupper-operator.semver.db")
	want := o.Run("diff", db, semver, "-o", "json")
	require.Equal(t, exit.OK, want.Code, want.ErrOut)
	for _, a := range sources[1:] {
		r := o.Run("diff", a, semver, "-o", "json", "--use-http")
		require.Equal(t, exit.OK, r.Code, r.ErrOut)
		assert.Equal(t, strings.Replace(want.Out, `"old": "`+db+`"`, `"old": "`+a+`"`, 1), r.Out, a)
	}
}

// writeCatalog writes one catalog.json of blobs into a new directory.
func writeCatalog(t *testing.T, blobs ...string) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "p"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "p", "catalog.json"), []byte(strings.Join(blobs, "\n")+"\n"), 0o644))
	return dir
}

// TestDiffDuplicatesAreErrors: a bundle or channel defined twice on
// either side is an error naming it and both places, never an answer
// (a duplicate in NEW once made --fail-on removed answer equal, exit 0).
func TestDiffDuplicatesAreErrors(t *testing.T) {
	t.Parallel()
	pkg := `{"schema":"olm.package","name":"p","defaultChannel":"s"}`
	ch := `{"schema":"olm.channel","package":"p","name":"s","entries":[{"name":"p.v1"}]}`
	b1 := `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"r/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}`
	b1other := `{"schema":"olm.bundle","package":"p","name":"p.v1","image":"r/p:other","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}`
	good := writeCatalog(t, pkg, ch, b1)
	dupBundle := writeCatalog(t, pkg, ch, b1, b1other)
	dupChannel := writeCatalog(t, pkg, ch, ch, b1)
	o := cmdtest.New(t)
	for _, tc := range []struct {
		old, new, what string
	}{
		{good, dupBundle, `bundle "p.v1" of package "p" is defined twice`},
		{dupBundle, good, `bundle "p.v1" of package "p" is defined twice`},
		{good, dupChannel, `channel "s" of package "p" is defined twice`},
		{dupChannel, good, `channel "s" of package "p" is defined twice`},
	} {
		r := o.Run("diff", tc.old, tc.new, "--fail-on", "removed", "-o", "json")
		assert.Equal(t, exit.Usage, r.Code, "a catalog that does not load is 2: %s", r.Out)
		assert.Contains(t, r.ErrOut, tc.what)
		assert.Contains(t, r.ErrOut, "p/catalog.json:")
		assert.NotContains(t, r.Out, `"equal": true`)
	}
	r := o.Run("diff", good, good, "--fail-on", "removed", "-o", "json")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
}

// TestDiffMarkdownCells: a | or a line break in a package name stays in
// its table cell.
func TestDiffMarkdownCells(t *testing.T) {
	t.Parallel()
	name := "a|b\nc | d"
	pkg := `{"schema":"olm.package","name":"a|b\nc | d","defaultChannel":"s"}`
	ch := `{"schema":"olm.channel","package":"a|b\nc | d","name":"s","entries":[{"name":"x.v1"}]}`
	b := `{"schema":"olm.bundle","package":"a|b\nc | d","name":"x.v1","image":"r/x:1","properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.0.0"}}]}`
	newC := writeCatalog(t, pkg, ch, b)
	oldC := writeCatalog(t, `{"schema":"olm.package","name":"other","defaultChannel":"s"}`)
	r := cmdtest.New(t).Run("diff", oldC, newC, "-o", "markdown")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var row string
	for _, line := range strings.Split(r.Out, "\n") {
		if strings.HasPrefix(line, "| ") && strings.Contains(line, "added") {
			row = line
		}
	}
	require.NotEmpty(t, row, "no table row for the added package in\n%s", r.Out)
	cells := regexp.MustCompile(`(^|[^\\])\|`).FindAllStringIndex(row, -1)
	assert.Len(t, cells, 8, "a row of 7 cells has 8 unescaped |: %q", row)
	assert.NotContains(t, r.Out, name)
}
