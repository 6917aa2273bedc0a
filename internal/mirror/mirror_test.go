package mirror

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/catalogimages"
)

const dig = "sha256:" + "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestTarget(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ to, source, repo, tag, digest string }{
		{"mirror.internal:5000/olm", "quay.io/org/op@" + dig, "mirror.internal:5000/olm/org/op", "", dig},
		{"mirror.internal:5000/olm/", "quay.io/org/op:v1", "mirror.internal:5000/olm/org/op", "v1", ""},
		{"m.example", "nginx", "m.example/library/nginx", "latest", ""},
		{"m.example", "registry.redhat.io/a/b/c:v1@" + dig, "m.example/a/b/c", "v1", dig},
		{"m.example", "localhost/catalog:latest", "m.example/catalog", "latest", ""},
	} {
		repo, tag, digest, err := Target(c.to, c.source, 0)
		require.NoError(t, err, c.source)
		assert.Equal(t, []string{c.repo, c.tag, c.digest}, []string{repo, tag, digest}, c.source)
	}
	_, _, _, err := Target("m.example", "Not A Reference", 0)
	assert.Error(t, err)
}

// TestTargetMaxNested: past the limit (the prefix counted, the registry
// host not), the first n-1 components stay and the rest join with "-",
// the same for every image; a prefix that leaves no room is refused, and
// so is a flattening that puts two repositories into one.
func TestTargetMaxNested(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		to, source string
		n          int
		repo       string
	}{
		{"m.example:5000/olm", "quay.io/org/op@" + dig, 2, "m.example:5000/olm/org-op"},
		{"m.example:5000/olm", "quay.io/org/op@" + dig, 3, "m.example:5000/olm/org/op"},
		{"m.example:5000/olm", "quay.io/org/op@" + dig, 0, "m.example:5000/olm/org/op"},
		{"m.example", "registry.redhat.io/a/b/c:v1", 2, "m.example/a/b-c"},
		{"m.example", "registry.redhat.io/a/b/c:v1", 1, "m.example/a-b-c"},
		{"m.example/x/y", "registry.redhat.io/a/b/c:v1", 3, "m.example/x/y/a-b-c"},
		{"m.example", "nginx", 1, "m.example/library-nginx"},
		{"m.example/olm", "localhost/catalog:latest", 2, "m.example/olm/catalog"},
	} {
		repo, _, _, err := Target(c.to, c.source, c.n)
		require.NoError(t, err, c.source)
		assert.Equal(t, c.repo, repo, "%s under %s, %d", c.source, c.to, c.n)
	}

	require.NoError(t, CheckNested("m.example/olm", 2))
	require.NoError(t, CheckNested("m.example", 1))
	require.NoError(t, CheckNested("m.example/a/b", 0))
	err := CheckNested("m.example/a/b", 2)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "its prefix a/b has 2 path components, and --max-nested-paths 2 leaves none")
	assert.Error(t, CheckNested("m.example/olm", -1))

	err = checkCollisions([]Item{{Source: "q.io/a/b-c:1"}, {Source: "q.io/a-b/c:1"}, {Source: "q.io/a/b-c:2"}}, Options{To: "m.example", MaxNestedPaths: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "puts both q.io/a/b-c and q.io/a-b/c into m.example/a-b-c")
	assert.NoError(t, checkCollisions([]Item{{Source: "q.io/a/b-c:1"}, {Source: "q.io/a/b-c:2"}}, Options{To: "m.example", MaxNestedPaths: 1}))
}

func TestObjectName(t *testing.T) {
	t.Parallel()
	for source, want := range map[string]string{
		"registry.redhat.io/redhat/redhat-operator-index:v4.17": "redhat-operator-index-v4-17",
		"localhost/catalog:latest":                              "catalog-latest",
		"quay.io/x/Index@" + dig:                                "index",
		"quay.io/x/" + strings.Repeat("a", 80) + ":v1":          strings.Repeat("a", 63),
	} {
		assert.Equal(t, want, objectName(source), source)
	}
}

// TestWriteManifests: images by digest go to the ImageDigestMirrorSet,
// by tag to the ImageTagMirrorSet, failed ones nowhere; the catalog gets a
// CatalogSource and a ClusterCatalog by digest, only for a complete mirror
// or with AllowIncomplete (then headed by what is missing).
func TestWriteManifests(t *testing.T) {
	t.Parallel()
	images := []Result{
		{Item: Item{Source: "quay.io/org/index:v1", Role: RoleCatalog}, Target: "m.example/olm/org/index@" + dig},
		{Item: Item{Source: "quay.io/org/op@" + dig, Role: RoleImage}, Target: "m.example/olm/org/op@" + dig},
		{Item: Item{Source: "quay.io/org/bundle:v1", Role: RoleImage}, Target: "m.example/olm/org/bundle@" + dig},
	}
	gone := Result{Item: Item{Source: "quay.io/org/gone@" + dig, Role: RoleImage}, Error: "not found"}

	// Incomplete: mirror sets, mapping.txt without the catalog, no catalog objects.
	dir := filepath.Join(t.TempDir(), "out")
	rep := &Report{To: "m.example/olm", Images: append(append([]Result{}, images...), gone)}
	rep.Tally()
	require.False(t, rep.Complete)
	files, err := WriteManifests(dir, rep, ManifestOptions{ICSP: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"imagedigestmirrorset.yaml", "imagecontentsourcepolicy.yaml", "imagetagmirrorset.yaml", "mapping.txt"}, baseNames(files))
	assert.Equal(t, CatalogWithheld, rep.CatalogObjects)
	assert.NotContains(t, readText(t, filepath.Join(dir, "mapping.txt")), "index")
	assert.Equal(t, []string{"quay.io/org/gone@" + dig}, rep.Missing)

	// --allow-incomplete: written, headed by what is missing.
	dir = filepath.Join(t.TempDir(), "out")
	files, err = WriteManifests(dir, rep, ManifestOptions{AllowIncomplete: true})
	require.NoError(t, err)
	assert.Contains(t, baseNames(files), "catalogsource-index-v1.yaml")
	assert.Equal(t, CatalogIncomplete, rep.CatalogObjects)
	for _, f := range []string{"catalogsource-index-v1.yaml", "clustercatalog-index-v1.yaml"} {
		text := readText(t, filepath.Join(dir, f))
		assert.True(t, strings.HasPrefix(text, "# INCOMPLETE MIRROR (--allow-incomplete): 1 images"), text)
		assert.Contains(t, text, "#   quay.io/org/gone@"+dig)
		var obj map[string]any
		require.NoError(t, yaml.Unmarshal([]byte(text), &obj), "still YAML")
	}
	assert.Contains(t, readText(t, filepath.Join(dir, "mapping.txt")), "quay.io/org/index:v1=")

	// Complete.
	dir = filepath.Join(t.TempDir(), "out")
	rep = &Report{Images: images}
	rep.Tally()
	require.True(t, rep.Complete)
	files, err = WriteManifests(dir, rep, ManifestOptions{ICSP: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{"imagedigestmirrorset.yaml", "imagecontentsourcepolicy.yaml", "imagetagmirrorset.yaml",
		"catalogsource-index-v1.yaml", "clustercatalog-index-v1.yaml", "mapping.txt"}, baseNames(files))
	assert.Equal(t, CatalogWritten, rep.CatalogObjects)
	assert.Equal(t, files, rep.Files, "the report names the files written")

	var idms struct {
		APIVersion, Kind string
		Spec             struct {
			ImageDigestMirrors []struct {
				Source  string
				Mirrors []string
			} `json:"imageDigestMirrors"`
		}
	}
	readYAML(t, filepath.Join(dir, "imagedigestmirrorset.yaml"), &idms)
	assert.Equal(t, "config.openshift.io/v1", idms.APIVersion)
	require.Len(t, idms.Spec.ImageDigestMirrors, 1)
	assert.Equal(t, "quay.io/org/op", idms.Spec.ImageDigestMirrors[0].Source)
	assert.Equal(t, []string{"m.example/olm/org/op"}, idms.Spec.ImageDigestMirrors[0].Mirrors)

	itms := readText(t, filepath.Join(dir, "imagetagmirrorset.yaml"))
	assert.Contains(t, itms, "source: quay.io/org/bundle")
	assert.Contains(t, readText(t, filepath.Join(dir, "imagecontentsourcepolicy.yaml")), "repositoryDigestMirrors")

	var cs struct {
		Metadata struct{ Name, Namespace string }
		Spec     struct{ SourceType, Image string }
	}
	readYAML(t, filepath.Join(dir, "catalogsource-index-v1.yaml"), &cs)
	assert.Equal(t, "openshift-marketplace", cs.Metadata.Namespace)
	assert.Equal(t, "grpc", cs.Spec.SourceType)
	assert.Equal(t, "m.example/olm/org/index@"+dig, cs.Spec.Image)
	assert.NotContains(t, readText(t, filepath.Join(dir, "catalogsource-index-v1.yaml")), "INCOMPLETE")
	assert.Contains(t, readText(t, filepath.Join(dir, "clustercatalog-index-v1.yaml")), "ref: m.example/olm/org/index@"+dig)
	assert.Equal(t, "quay.io/org/bundle:v1=m.example/olm/org/bundle@"+dig+"\nquay.io/org/index:v1=m.example/olm/org/index@"+dig+
		"\nquay.io/org/op@"+dig+"=m.example/olm/org/op@"+dig+"\n", readText(t, filepath.Join(dir, "mapping.txt")))
}

func baseNames(files []string) []string {
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	return names
}

const dig2 = "sha256:" + "1123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// TestFromDir: the images of a mirror directory's report, the catalog
// first, with the bundles that use each and what is attached to them,
// and what the run that wrote it missed; an entry not in the report, or
// with another digest, refuses the directory.
func TestFromDir(t *testing.T) {
	t.Parallel()
	entry := func(name, d string, extra string) string {
		return `{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + d + `","size":1,"annotations":{"org.opencontainers.image.ref.name":"` + name + `"` + extra + `}}`
	}
	write := func(t *testing.T, entries ...string) string {
		dir := t.TempDir()
		require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), []byte(`{"schemaVersion":2,"manifests":[`+strings.Join(entries, ",")+`]}`), 0o644))
		uses := []catalogimages.Use{{Package: "p", Bundle: "p.v1", As: "related"}}
		prev := Report{Images: []Result{
			{Item: Item{Source: "quay.io/org/index:v1", Role: RoleCatalog}, Digest: dig},
			{Item: Item{Source: "quay.io/org/op@" + dig, Role: RoleImage, Uses: uses}, Digest: dig,
				Referrers: []string{"sha256-0123.sig"}, Attached: map[string]string{"sha256-0123.sig": dig2}},
			{Item: Item{Source: "quay.io/org/gone:v1", Role: RoleImage, Uses: uses}, Error: "manifest unknown"},
		}}
		raw, err := json.Marshal(prev)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, ReportFile), raw, 0o644))
		return dir
	}
	good := []string{entry("quay.io/org/op@"+dig, dig, ""), entry("quay.io/org/op:sha256-0123.sig", dig2, ""),
		entry("quay.io/org/index:v1", dig, `,"io.opmkit.mirror.role":"catalog"`)}

	dir := write(t, good...)
	items, missing, err := FromDir(dir)
	require.NoError(t, err)
	require.Len(t, items, 2, "the signature goes with its image, not as an image of its own")
	assert.Equal(t, RoleCatalog, items[0].Role)
	assert.Equal(t, dir, items[0].Dir)
	assert.Equal(t, "quay.io/org/op@"+dig, items[1].Source)
	assert.Equal(t, []Attachment{{Name: "sha256-0123.sig", Digest: dig2}}, items[1].Attached)
	assert.Len(t, items[1].Uses, 1)
	require.Len(t, missing, 1)
	assert.Equal(t, "quay.io/org/gone:v1", missing[0].Source)
	assert.Contains(t, missing[0].Error, "not in "+dir)
	assert.Contains(t, missing[0].Error, "--to-dir again on the connected side")

	// A swapped catalog.
	_, _, err = FromDir(write(t, good[0], good[1], entry("quay.io/org/index:v1", dig2, "")))
	assert.ErrorContains(t, err, "catalog quay.io/org/index:v1 with digest "+dig2+", but "+ReportFile+" says the run wrote "+dig)
	// An entry slipped in.
	_, _, err = FromDir(write(t, append(good, entry("quay.io/evil/x:1", dig2, ""))...))
	assert.ErrorContains(t, err, "quay.io/evil/x:1")
	// An image the report says arrived, gone from index.json: missing.
	_, missing, err = FromDir(write(t, good[1], good[2]))
	require.NoError(t, err)
	assert.Len(t, missing, 2)

	// An image an earlier run wrote (another catalog's) is in the report's
	// earlier list, and copied on too.
	dir = write(t, append(good, entry("quay.io/other/x:1", dig2, ""))...)
	raw, err := os.ReadFile(filepath.Join(dir, ReportFile))
	require.NoError(t, err)
	var prev Report
	require.NoError(t, json.Unmarshal(raw, &prev))
	prev.Earlier = []Result{{Item: Item{Source: "quay.io/other/x:1", Role: RoleImage}, Digest: dig2}}
	raw, err = json.Marshal(prev)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ReportFile), raw, 0o644))
	items, _, err = FromDir(dir)
	require.NoError(t, err)
	assert.Len(t, items, 3)

	// No report.
	dir = write(t, good...)
	require.NoError(t, os.Remove(filepath.Join(dir, ReportFile)))
	_, _, err = FromDir(dir)
	assert.ErrorContains(t, err, ReportFile)

	_, _, err = FromDir(t.TempDir())
	assert.ErrorContains(t, err, "was it written by opm alpha mirror --to-dir?")
}

func readText(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(raw)
}

func readYAML(t *testing.T, path string, v any) {
	t.Helper()
	require.NoError(t, yaml.Unmarshal([]byte(readText(t, path)), v))
}
