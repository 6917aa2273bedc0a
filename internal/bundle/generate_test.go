package bundle

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		p := filepath.Join(root, name)
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
	}
}

func TestGenerateWritesAnnotationsAndDockerfile(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"op/manifests/csv.yaml": strings.Replace(minimalCSV, "a.v1.0.0", "widget.v1.0.0", 1)})
	_, err := Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "op/manifests"), Package: "widget", Channels: []string{"stable", "2022.4"}, DefaultChannel: "stable", WorkDir: root})
	require.NoError(t, err)

	ann, err := os.ReadFile(filepath.Join(root, "op/metadata/annotations.yaml"))
	require.NoError(t, err)
	assert.Equal(t, `annotations:
  operators.operatorframework.io.bundle.channel.default.v1: stable
  operators.operatorframework.io.bundle.channels.v1: stable,2022.4
  operators.operatorframework.io.bundle.manifests.v1: manifests/
  operators.operatorframework.io.bundle.mediatype.v1: registry+v1
  operators.operatorframework.io.bundle.metadata.v1: metadata/
  operators.operatorframework.io.bundle.package.v1: widget
`, string(ann))

	df, err := os.ReadFile(filepath.Join(root, "bundle.Dockerfile"))
	require.NoError(t, err)
	assert.Equal(t, `FROM scratch

LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=widget
LABEL operators.operatorframework.io.bundle.channels.v1=stable,2022.4
LABEL operators.operatorframework.io.bundle.channel.default.v1=stable

COPY op/manifests /manifests/
COPY op/metadata /metadata/
`, string(df), "upstream's bundle.Dockerfile, byte for byte")

	// The result is a bundle opm loads, and the annotations read back.
	b, err := LoadDir(filepath.Join(root, "op"))
	require.NoError(t, err)
	assert.Equal(t, []string{"stable", "2022.4"}, b.Annotations.Channels())
	assert.Equal(t, "stable", b.Annotations.DefaultChannel())
}

func TestGenerateInfersAndRefusesToClobber(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"manifests/csv.yaml":        minimalCSV,
		"metadata/annotations.yaml": "annotations:\n  operators.operatorframework.io.bundle.package.v1: a\n  operators.operatorframework.io.bundle.channels.v1: alpha\n  com.redhat.openshift.versions: v4.10\n",
	})
	opts := GenerateOptions{ManifestsDir: filepath.Join(root, "manifests"), WorkDir: root}
	_, err := Generate(opts)
	var diff *AnnotationsDiffError
	require.True(t, errors.As(err, &diff), "got %v", err)
	assert.Contains(t, diff.Error(), "+ operators.operatorframework.io.bundle.mediatype.v1: registry+v1")
	assert.Contains(t, diff.Error(), "--overwrite")
	before, _ := os.ReadFile(filepath.Join(root, "metadata/annotations.yaml"))

	opts.Overwrite = true
	res, err := Generate(opts)
	require.NoError(t, err)
	assert.Equal(t, "a", res.Annotations[AnnotationPackage], "package inferred from the existing file")
	assert.Equal(t, "alpha", res.Annotations[AnnotationDefaultChannel], "the only channel is the default")
	assert.Equal(t, "v4.10", res.Annotations["com.redhat.openshift.versions"], "keys opm does not manage are kept")
	after, _ := os.ReadFile(filepath.Join(root, "metadata/annotations.yaml"))
	assert.NotEqual(t, string(before), string(after))

	// Running again changes nothing and needs no --overwrite.
	res, err = Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "manifests"), WorkDir: root})
	require.NoError(t, err)
	assert.True(t, res.AnnotationsUnchanged)
}

func TestGenerateErrors(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"manifests/csv.yaml": minimalCSV})
	m := filepath.Join(root, "manifests")
	_, err := Generate(GenerateOptions{ManifestsDir: m, WorkDir: root})
	assert.EqualError(t, err, "no channels: give -c/--channels (e.g. --channels stable)", "the package is a, from the CSV name a.v1.0.0")
	_, err = Generate(GenerateOptions{ManifestsDir: m, Package: "a", WorkDir: root})
	assert.ErrorContains(t, err, "--channels")
	_, err = Generate(GenerateOptions{ManifestsDir: m, Package: "a", Channels: []string{"a", "b"}, WorkDir: root})
	assert.ErrorContains(t, err, "--default")
	_, err = Generate(GenerateOptions{ManifestsDir: m, Package: "a", Channels: []string{"a"}, DefaultChannel: "b", WorkDir: root})
	assert.ErrorContains(t, err, `default channel "b" is not one of the channels`)
	_, err = Generate(GenerateOptions{ManifestsDir: m, Package: "a", Channels: []string{"a", "b"}, DefaultChannel: "c", Upstream: true, WorkDir: root})
	assert.ErrorContains(t, err, `default channel "c" is not one of the channels`, "upstream never checked; opm does on both paths")
	_, err = Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "nope"), Package: "a", Channels: []string{"a"}, WorkDir: root})
	assert.Error(t, err)
	_, statErr := os.Stat(filepath.Join(root, "metadata"))
	assert.True(t, os.IsNotExist(statErr), "a refused run writes nothing")
}

func TestGenerateCopiesToOutputDir(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{"src/csv.yaml": minimalCSV})
	res, err := Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "src"), OutputDir: filepath.Join(root, "out"), Package: "a", Channels: []string{"x"}, WorkDir: root})
	require.NoError(t, err)
	assert.True(t, res.CopiedManifests)
	b, err := LoadDir(filepath.Join(root, "out"))
	require.NoError(t, err)
	assert.Equal(t, "a.v1.0.0", b.CSV.Metadata.Name)
}

// getting-started.md runs `opm bundle generate -d manifests -c stable`: the
// package comes from a CSV named <package>.v<spec.version>, and only then.
func TestGeneratePackageFromCSVName(t *testing.T) {
	csv := func(name, version string) string {
		s := "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: " + name + "\nspec:\n"
		if version != "" {
			s += "  version: " + version + "\n"
		}
		return s
	}
	for _, tc := range []struct {
		name, version, want string
	}{
		{"example-operator.v0.1.0", "0.1.0", "example-operator"},
		{"etcdoperator.v0.9.4-clusterwide", "0.9.4-clusterwide", "etcdoperator"},
		{"my.dotted.op.v1.2.3", "1.2.3", "my.dotted.op"},
		{"widget.v2.0.0", "", "widget"}, // no spec.version: a semver after .v
		{"widget.v2.0.0", "2.0.1", ""},  // name and version disagree
		{"widget-2.0.0", "2.0.0", ""},   // not <package>.v<version>
		{"widget.vnext", "", ""},        // not a version
		{".v1.0.0", "1.0.0", ""},        // no package before .v
	} {
		t.Run(tc.name+"/"+tc.version, func(t *testing.T) {
			root := t.TempDir()
			writeTree(t, root, map[string]string{"op/manifests/csv.yaml": csv(tc.name, tc.version)})
			res, err := Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "op/manifests"), Channels: []string{"stable"}, WorkDir: root})
			if tc.want == "" {
				require.ErrorContains(t, err, "-p/--package")
				require.ErrorContains(t, err, "<package>.v<version>", "the error says which names are taken")
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Annotations[AnnotationPackage])
			assert.Equal(t, "stable", res.Annotations[AnnotationDefaultChannel])
			require.Len(t, res.Notes, 1)
			assert.Equal(t, `package "`+tc.want+`" taken from the CSV name `+tc.name, res.Notes[0])
		})
	}

	// upstream's path (opm alpha bundle generate) still asks for -p.
	root := t.TempDir()
	writeTree(t, root, map[string]string{"op/manifests/csv.yaml": csv("widget.v1.0.0", "1.0.0")})
	_, err := Generate(GenerateOptions{ManifestsDir: filepath.Join(root, "op/manifests"), Channels: []string{"stable"}, WorkDir: root, Upstream: true})
	require.ErrorContains(t, err, "-p/--package")
}
