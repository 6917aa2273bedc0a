package mirror

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/catalogimages"
)

// TestBlocker: a reference with a tag or digest blocks that image, one
// without blocks the repository (short names normalized), anything else
// is an RE2 pattern; an entry that is neither is refused.
func TestBlocker(t *testing.T) {
	t.Parallel()
	b, err := NewBlocker([]string{
		"docker.io/library/alpine",
		"quay.io/org/op:v1",
		"quay.io/org/pinned@" + dig,
		`.*/debug-[a-z]+$`,
	})
	require.NoError(t, err)
	for source, want := range map[string]string{
		"alpine:3":                            "docker.io/library/alpine",
		"docker.io/library/alpine@" + dig:     "docker.io/library/alpine",
		"docker.io/library/alpine-slim:3":     "",
		"quay.io/org/op:v1":                   "quay.io/org/op:v1",
		"quay.io/org/op:v1@" + dig:            "quay.io/org/op:v1",
		"quay.io/org/op:v2":                   "",
		"quay.io/org/op@" + dig:               "",
		"quay.io/org/pinned@" + dig:           "quay.io/org/pinned@" + dig,
		"quay.io/org/pinned:v1":               "",
		"quay.io/org/debug-tools@" + dig:      `.*/debug-[a-z]+$`,
		"quay.io/org/debug-tools-x:1":         "",
		"registry.example/a/b/operator:1.2.3": "",
	} {
		assert.Equal(t, want, b.Match(source), source)
	}
	_, err = NewBlocker([]string{"Quay.io/(unclosed"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `mirror.blockedImages "Quay.io/(unclosed" is neither an image reference`)

	var none *Blocker
	assert.Empty(t, none.Match("alpine"))

	uses := []catalogimages.Use{{Package: "p", Bundle: "p.v1", As: "related"}}
	items := []Item{
		{Source: "quay.io/org/index:v1", Role: RoleCatalog},
		{Source: "quay.io/org/op:v1", Role: RoleImage, Uses: uses},
		{Source: "quay.io/org/keep:v1", Role: RoleImage},
		{Source: "alpine:3", Role: RoleAdditional},
	}
	kept, blocked := Block(items, b)
	assert.Equal(t, []Item{items[0], items[2]}, kept)
	assert.Equal(t, []Blocked{
		{Source: "quay.io/org/op:v1", Entry: "quay.io/org/op:v1", Role: RoleImage, Uses: uses},
		{Source: "alpine:3", Entry: "docker.io/library/alpine", Role: RoleAdditional},
	}, blocked)
}

// TestDedupe: an image several catalogs (or an additional image) name is
// copied once, with every bundle that uses it.
func TestDedupe(t *testing.T) {
	t.Parallel()
	a := []catalogimages.Use{{Package: "a", Bundle: "a.v1"}}
	b := []catalogimages.Use{{Package: "b", Bundle: "b.v1"}}
	out := Dedupe([]Item{
		{Source: "q.io/x/index:1", Role: RoleCatalog},
		{Source: "q.io/x/op@" + dig, Role: RoleImage, Uses: a},
		{Source: "q.io/x/index2:1", Role: RoleCatalog},
		{Source: "q.io/x/op@" + dig, Role: RoleImage, Uses: b},
		{Source: "nginx", Role: RoleAdditional},
		{Source: "docker.io/library/nginx:latest", Role: RoleAdditional},
	})
	require.Len(t, out, 4)
	assert.Equal(t, append(append([]catalogimages.Use{}, a...), b...), out[1].Uses)
	assert.Equal(t, "nginx", out[3].Source)
}

// TestManifestsSeveralCatalogs: each catalog of a run gets its own
// CatalogSource and ClusterCatalog, named after it, and a mapping line.
func TestManifestsSeveralCatalogs(t *testing.T) {
	t.Parallel()
	rep := &Report{To: "m.example/olm", Images: []Result{
		{Item: Item{Source: "q.io/a/redhat-operators:v4.17", Role: RoleCatalog}, Target: "m.example/olm/a/redhat-operators@" + dig},
		{Item: Item{Source: "q.io/a/certified-operators:v4.17", Role: RoleCatalog}, Target: "m.example/olm/a/certified-operators@" + dig},
		{Item: Item{Source: "q.io/a/op@" + dig, Role: RoleImage}, Target: "m.example/olm/a/op@" + dig},
	}}
	rep.Tally()
	dir := t.TempDir()
	_, err := WriteManifests(dir, rep, ManifestOptions{})
	require.NoError(t, err)
	for _, name := range []string{"redhat-operators-v4-17", "certified-operators-v4-17"} {
		cs, err := os.ReadFile(filepath.Join(dir, "catalogsource-"+name+".yaml"))
		require.NoError(t, err, name)
		assert.Contains(t, string(cs), "name: "+name+"\n")
		_, err = os.Stat(filepath.Join(dir, "clustercatalog-"+name+".yaml"))
		require.NoError(t, err, name)
	}
	mapping, err := os.ReadFile(filepath.Join(dir, "mapping.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(mapping), "q.io/a/certified-operators:v4.17=m.example/olm/a/certified-operators@"+dig)
	assert.Contains(t, string(mapping), "q.io/a/redhat-operators:v4.17=m.example/olm/a/redhat-operators@"+dig)
	assert.Equal(t, CatalogWritten, rep.CatalogObjects)
}

// FuzzBlocker: any entry is read or refused, never a panic; an entry read
// as a reference blocks that very image.
func FuzzBlocker(f *testing.F) {
	for _, s := range []string{"docker.io/library/alpine", "quay.io/org/op:v1", "quay.io/org/pinned@" + dig, `.*/debug-[a-z]+$`, "(", "a/b/c:1@" + dig, "UPPER/case"} {
		f.Add(s, "quay.io/org/op:v1")
	}
	f.Fuzz(func(t *testing.T, entry, source string) {
		b, err := NewBlocker([]string{entry})
		if err != nil {
			return
		}
		_ = b.Match(source)
		if b.entries[0].re == nil && b.Match(entry) == "" {
			t.Fatalf("%q does not block itself", entry)
		}
	})
}

// TestManifestsWithoutCatalog: a run of additional images only writes the
// mirror sets and mapping.txt, and no catalog objects are said withheld.
func TestManifestsWithoutCatalog(t *testing.T) {
	t.Parallel()
	rep := &Report{To: "m.example", Images: []Result{
		{Item: Item{Source: "q.io/a/tools:v1", Role: RoleAdditional}, Target: "m.example/a/tools@" + dig},
	}}
	rep.Tally()
	dir := t.TempDir()
	files, err := WriteManifests(dir, rep, ManifestOptions{})
	require.NoError(t, err)
	assert.Len(t, files, 2, "imagetagmirrorset.yaml and mapping.txt")
	assert.Empty(t, rep.CatalogObjects)
	rep.Images = append(rep.Images, Result{Item: Item{Source: "q.io/a/index:1", Role: RoleCatalog}, Error: "gone"})
	rep.Tally()
	_, err = WriteManifests(dir, rep, ManifestOptions{})
	require.NoError(t, err)
	assert.Equal(t, CatalogWithheld, rep.CatalogObjects)
}
