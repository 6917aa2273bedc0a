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
		repo, tag, digest, err := Target(c.to, c.source)
		require.NoError(t, err, c.source)
		assert.Equal(t, []string{c.repo, c.tag, c.digest}, []string{repo, tag, digest}, c.source)
	}
	_, _, _, err := Target("m.example", "Not A Reference")
	assert.Error(t, err)
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
// CatalogSource and a ClusterCatalog by digest.
func TestWriteManifests(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "out")
	rep := &Report{Images: []Result{
		{Item: Item{Source: "quay.io/org/index:v1", Role: RoleCatalog}, Target: "m.example/olm/org/index@" + dig},
		{Item: Item{Source: "quay.io/org/op@" + dig, Role: RoleImage}, Target: "m.example/olm/org/op@" + dig},
		{Item: Item{Source: "quay.io/org/bundle:v1", Role: RoleImage}, Target: "m.example/olm/org/bundle@" + dig},
		{Item: Item{Source: "quay.io/org/gone@" + dig, Role: RoleImage}, Error: "not found"},
	}}
	files, err := WriteManifests(dir, rep, ManifestOptions{ICSP: true})
	require.NoError(t, err)
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	assert.ElementsMatch(t, []string{"imagedigestmirrorset.yaml", "imagecontentsourcepolicy.yaml", "imagetagmirrorset.yaml",
		"catalogsource-index-v1.yaml", "clustercatalog-index-v1.yaml", "mapping.txt"}, names)

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
	require.Len(t, idms.Spec.ImageDigestMirrors, 1, "the failed image has no mirror")
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
	assert.Contains(t, readText(t, filepath.Join(dir, "clustercatalog-index-v1.yaml")), "ref: m.example/olm/org/index@"+dig)
	assert.Equal(t, "quay.io/org/bundle:v1=m.example/olm/org/bundle@"+dig+"\nquay.io/org/index:v1=m.example/olm/org/index@"+dig+
		"\nquay.io/org/op@"+dig+"=m.example/olm/org/op@"+dig+"\n", readText(t, filepath.Join(dir, "mapping.txt")))
}

// TestFromDir: the entries of a mirror directory, the catalog first, with
// the bundles that use each, and what the run that wrote it missed.
func TestFromDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	index := `{"schemaVersion":2,"manifests":[
{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + dig + `","size":1,"annotations":{"org.opencontainers.image.ref.name":"quay.io/org/op@` + dig + `"}},
{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"` + dig + `","size":1,"annotations":{"org.opencontainers.image.ref.name":"quay.io/org/index:v1","io.opmkit.mirror.role":"catalog"}}]}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "index.json"), []byte(index), 0o644))
	uses := []catalogimages.Use{{Package: "p", Bundle: "p.v1", As: "related"}}
	prev := Report{Images: []Result{
		{Item: Item{Source: "quay.io/org/op@" + dig, Uses: uses}},
		{Item: Item{Source: "quay.io/org/gone:v1", Uses: uses}, Error: "manifest unknown"},
	}}
	raw, err := json.Marshal(prev)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, ReportFile), raw, 0o644))

	items, missing, err := FromDir(dir)
	require.NoError(t, err)
	require.Len(t, items, 2)
	assert.Equal(t, RoleCatalog, items[0].Role)
	assert.Equal(t, "oci:"+dir+":quay.io/org/index:v1", items[0].From)
	assert.Equal(t, uses, items[1].Uses)
	require.Len(t, missing, 1)
	assert.Equal(t, "quay.io/org/gone:v1", missing[0].Source)
	assert.Contains(t, missing[0].Error, "not in "+dir)

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
