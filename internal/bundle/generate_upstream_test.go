package bundle

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/shareddata"
)

func TestGenerateUpstreamPath(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"op/manifests/csv.yaml": minimalCSV})
	m := filepath.Join(root, "op/manifests")

	_, err := Generate(GenerateOptions{ManifestsDir: m, Channels: []string{"a"}, Upstream: true, WorkDir: root})
	require.ErrorContains(t, err, "-p/--package")

	// Several channels and no default: no default-channel annotation, and
	// upstream's Dockerfile has then no blank line before the COPY lines.
	res, err := Generate(GenerateOptions{ManifestsDir: m, Package: "op", Channels: []string{"fast", "stable"}, Upstream: true, WorkDir: root, BaseImage: "registry.example/base:1"})
	require.NoError(t, err)
	_, hasDefault := res.Annotations[AnnotationDefaultChannel]
	assert.False(t, hasDefault)
	df, err := os.ReadFile(filepath.Join(root, "bundle.Dockerfile"))
	require.NoError(t, err)
	assert.Equal(t, `FROM registry.example/base:1

LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=op
LABEL operators.operatorframework.io.bundle.channels.v1=fast,stable
COPY op/manifests /manifests/
COPY op/metadata /metadata/
`, string(df))
	ann, err := os.ReadFile(filepath.Join(root, "op/metadata/annotations.yaml"))
	require.NoError(t, err)
	assert.NotContains(t, string(ann), AnnotationDefaultChannel)

	// opm's own path still refuses to leave the default open.
	_, err = Generate(GenerateOptions{ManifestsDir: m, Package: "op", Channels: []string{"fast", "stable"}, Overwrite: true, WorkDir: root})
	require.ErrorContains(t, err, "-e/--default")
}

func TestGenerateUpstreamManifestsDirNotNamedManifests(t *testing.T) {
	// Upstream's -d is the manifests directory, whatever its name; metadata/
	// goes beside it and, without -u, nothing is copied.
	root := t.TempDir()
	writeTree(t, root, map[string]string{"deploy/olm/0.1.0/csv.yaml": minimalCSV})
	res, err := Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "deploy/olm/0.1.0"), Package: "a", Channels: []string{"x"}, DefaultChannel: "x", Upstream: true, WorkDir: root})
	require.NoError(t, err)
	assert.False(t, res.CopiedManifests)
	df, err := os.ReadFile(res.Dockerfile)
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(string(df), "LABEL operators.operatorframework.io.bundle.channel.default.v1=x\n\nCOPY deploy/olm/0.1.0 /manifests/\nCOPY deploy/olm/metadata /metadata/\n"), "got:\n%s", df)
	_, err = os.Stat(filepath.Join(root, "deploy/olm/metadata/annotations.yaml"))
	assert.NoError(t, err)
}

func TestGeneratePackageFromAnnotationsOnly(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"manifests/csv.yaml":        minimalCSV,
		"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: real-name\n  operators.operatorframework.io.bundle.channels.v1: alpha\n",
	})
	res, err := Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "manifests"), Overwrite: true, WorkDir: root})
	require.NoError(t, err)
	assert.Equal(t, "real-name", res.Annotations[AnnotationPackage])
	assert.Contains(t, strings.Join(res.Notes, "\n"), "taken from")
}

// corpusDir is the shared corpus of real bundles beside the checkout. Absent,
// the test skips and says why; under CI=true it fails instead.
func corpusDir(t *testing.T) string {
	t.Helper()
	return shareddata.Require(t, "corpus")
}

// upstreamShape writes the Dockerfile upstream's generator would write for
// a bundle's annotations, straight from the facts (FORMATS.md and upstream's
// template): an independent statement of what UpstreamDockerfile must give.
func upstreamShape(ann map[string]string) string {
	lines := []string{"FROM scratch", ""}
	for _, k := range []string{
		"operators.operatorframework.io.bundle.mediatype.v1",
		"operators.operatorframework.io.bundle.manifests.v1",
		"operators.operatorframework.io.bundle.metadata.v1",
		"operators.operatorframework.io.bundle.package.v1",
		"operators.operatorframework.io.bundle.channels.v1",
	} {
		lines = append(lines, "LABEL "+k+"="+ann[k])
	}
	if d := ann["operators.operatorframework.io.bundle.channel.default.v1"]; d != "" {
		lines = append(lines, "LABEL operators.operatorframework.io.bundle.channel.default.v1="+d, "")
	}
	lines = append(lines, "COPY manifests /manifests/", "COPY metadata /metadata/")
	return strings.Join(lines, "\n") + "\n"
}

func TestDockerfileMatchesUpstreamOnCorpus(t *testing.T) {
	root := corpusDir(t)
	var files []string
	require.NoError(t, filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() == "annotations.yaml" && filepath.Base(filepath.Dir(p)) == "metadata" {
			files = append(files, p)
		}
		return err
	}))
	sort.Strings(files)
	require.NotEmpty(t, files)
	exact := 0
	for _, f := range files {
		ann, err := readAnnotationsFile(f)
		if err != nil {
			continue // a broken annotations.yaml is the validator's business
		}
		bundleDir := filepath.Dir(filepath.Dir(f))
		got := string(Dockerfile(ann, ""))
		assert.Equal(t, upstreamShape(ann), got, f)

		// Where the corpus holds a bundle.Dockerfile that upstream's
		// generator wrote unchanged (its exact shape: no comments, no
		// extra labels), ours must be the same bytes.
		written, err := os.ReadFile(filepath.Join(bundleDir, "bundle.Dockerfile"))
		if err != nil || !writtenByUpstream(string(written), ann) {
			continue
		}
		exact++
		assert.Equal(t, string(written), got, "%s/bundle.Dockerfile", bundleDir)
	}
	t.Logf("%d annotations.yaml files; %d upstream-written bundle.Dockerfile files compared byte for byte", len(files), exact)
	assert.Positive(t, exact, "the corpus holds upstream-written Dockerfiles (aqua); none was compared")
}

// writtenByUpstream: only FROM, the core LABELs and the two COPY lines, and
// the LABELs say what annotations.yaml says (a Dockerfile edited by hand
// since, such as E02's mediatype, is no evidence of upstream's output).
func writtenByUpstream(s string, ann map[string]string) bool {
	for _, l := range strings.Split(s, "\n") {
		switch {
		case l == "", l == "FROM scratch", l == "COPY manifests /manifests/", l == "COPY metadata /metadata/":
		case strings.HasPrefix(l, "LABEL operators.operatorframework.io.bundle."):
			k, v, _ := strings.Cut(strings.TrimPrefix(l, "LABEL "), "=")
			if ann[k] != v {
				return false
			}
		default:
			return false
		}
	}
	return true
}
