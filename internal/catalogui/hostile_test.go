package catalogui_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogtest"
	"github.com/opmkit/opm/internal/catalogui"
)

// hostileDir writes issue 40's n² channel of n bundles: entry i replaces
// i-1 and has skipRange "<i.0.0", over every bundle before it.
func hostileDir(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), catalogtest.HostileChannel(n, 0), 0o644))
	return dir
}

// TestHostileChannelPageMemory: one GET of the package page of the n²
// channel of 2,000 bundles (its picture, entries table and Install panel)
// allocates a bounded amount: drawn from a document with an edge per
// covered bundle it allocated 687 MB (2 million edges); from each
// skipRange once, 32 MB.
func TestHostileChannelPageMemory(t *testing.T) {
	base := serveDir(t, hostileDir(t, 2000), catalogui.Options{})
	for _, path := range []string{"/ui/packages/h", "/ui/packages/h/channels/stable"} {
		var code int
		var body string
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		code, body, _ = get(t, base+path)
		runtime.ReadMemStats(&after)
		require.Equal(t, 200, code, body)
		got := after.TotalAlloc - before.TotalAlloc
		t.Logf("GET %s: %.1f MB allocated, page %d KB", path, float64(got)/(1<<20), len(body)>>10)
		if got > 250<<20 {
			t.Errorf("GET %s allocated %d MB; want under 250 MB", path, got>>20)
		}
		assert.Contains(t, body, `aria-label="h / stable"`, "the channel's picture")
		assert.Contains(t, body, "<td>&lt;2000.0.0</td>", "the head's skipRange in the entries table")
	}
}

// TestBadVersionOnlyItsBundle: a bundle whose version is not semver, and
// one without an olm.package property, lose their own version only; the
// others keep theirs in the bundle list, the entries table and the
// picture (whose skipRange still covers them), and the bad bundles' pages
// say why they have none.
func TestBadVersionOnlyItsBundle(t *testing.T) {
	t.Parallel()
	lines := []string{
		`{"schema":"olm.package","name":"p","defaultChannel":"stable"}`,
		`{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1"},{"name":"p.bad","replaces":"p.v1"},{"name":"p.none","replaces":"p.bad"},{"name":"p.v3","replaces":"p.none","skipRange":"<3.0.0"}]}`,
		`{"schema":"olm.bundle","name":"p.v1","package":"p","image":"example.com/p:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}`,
		`{"schema":"olm.bundle","name":"p.bad","package":"p","image":"example.com/p:2","properties":[{"type":"olm.package","value":{"packageName":"p","version":"two"}}]}`,
		`{"schema":"olm.bundle","name":"p.none","package":"p","image":"example.com/p:2b","properties":[]}`,
		`{"schema":"olm.bundle","name":"p.v3","package":"p","image":"example.com/p:3","properties":[{"type":"olm.package","value":{"packageName":"p","version":"3.0.0"}}]}`,
	}
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	base := serveDir(t, dir, catalogui.Options{})

	code, body, _ := get(t, base+"/ui/packages/p")
	require.Equal(t, 200, code, body)
	assert.Contains(t, body, `<a href="/ui/packages/p/bundles/p.v1">p.v1</a> 1.0.0</li>`, "the bundle list keeps the good versions")
	assert.Contains(t, body, `<a href="/ui/packages/p/bundles/p.v3">p.v3</a> 3.0.0</li>`)
	assert.Contains(t, body, `<a href="/ui/packages/p/bundles/p.bad">p.bad</a> </li>`)
	assert.Contains(t, body, "<td>1.0.0</td>", "the entries table keeps the good versions")
	assert.Contains(t, body, "<td>3.0.0</td>")
	assert.Contains(t, body, `class="edge range`, "p.v3's skipRange still covers p.v1 in the picture")
	assert.Contains(t, body, "covers 1 bundle", "p.v1 only: the bundles without a version are not covered")

	for name, why := range map[string]string{"p.bad": `has version &#34;two&#34;, which is not semver`, "p.none": "has 0 olm.package properties"} {
		code, body, _ = get(t, base+"/ui/packages/p/bundles/"+name)
		require.Equal(t, 200, code, body)
		assert.Contains(t, body, `<span class="warn" id="version-error">no version: bundle &#34;`+name+`&#34; `+why, name)
	}
	_, body, _ = get(t, base+"/ui/packages/p/bundles/p.v3")
	assert.Contains(t, body, `<td id="version">3.0.0</td>`)
}
