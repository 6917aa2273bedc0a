package bundle

import (
	"errors"
	"os"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/yamldoc"
)

const minimalCSV = "apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a.v1.0.0\nspec:\n  version: 1.0.0\n"

func TestLoadSyntaxErrorIsNotMissingCSV(t *testing.T) {
	fsys := fstest.MapFS{
		"manifests/a.clusterserviceversion.yaml": {Data: []byte("apiVersion: v1\nkind: ClusterServiceVersion\nmetadata:\n  name: [a\n")},
	}
	b, err := Load(fsys)
	require.Error(t, err)
	require.NotNil(t, b)
	var se *yamldoc.SyntaxError
	require.True(t, errors.As(err, &se), "got %v", err)
	assert.Equal(t, "manifests/a.clusterserviceversion.yaml", se.File)
	assert.Equal(t, 4, se.Line, "the line of the unclosed bracket")
	assert.Contains(t, err.Error(), "the CSV may be in a file with a syntax error: fix those first", "the missing CSV is blamed on the syntax error, not reported alone")
}

func TestLoadReadsAllFormatsAndDocuments(t *testing.T) {
	fsys := fstest.MapFS{
		"manifests/csv.yml":          {Data: []byte(minimalCSV)},
		"manifests/crd.json":         {Data: []byte(`{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition", "metadata": {"name": "as.example.com"}, "spec": {"group": "example.com", "names": {"plural": "as", "kind": "A"}, "scope": "Namespaced", "versions": [{"name": "v1", "served": true, "storage": true}]}}`)},
		"manifests/svc.yaml":         {Data: []byte("apiVersion: v1\nkind: Service\nmetadata:\n  name: one\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: two\n---\n")},
		"manifests/notes.txt":        {Data: []byte("ignored")},
		"metadata/annotations.yaml":  {Data: []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: a\n  operators.operatorframework.io.bundle.channels.v1: ' stable , fast,'\n")},
		"metadata/properties.yaml":   {Data: []byte("properties:\n- type: olm.maxOpenShiftVersion\n  value: \"4.8\"\n")},
		"metadata/dependencies.yaml": {Data: []byte("dependencies:\n- type: olm.package\n  value: {packageName: b, version: '>=1.0.0'}\n")},
	}
	b, err := Load(fsys)
	require.NoError(t, err)
	assert.Equal(t, ".", b.Root)
	assert.Equal(t, "a.v1.0.0", b.CSV.Metadata.Name)
	require.Len(t, b.CRDs, 1)
	assert.Equal(t, "manifests/crd.json", b.CRDs[0].Object.File)
	assert.True(t, b.CRDs[0].ServedVersion("v1"))
	var names []string
	for _, o := range b.Objects {
		names = append(names, o.File+":"+o.Name)
	}
	assert.ElementsMatch(t, []string{"manifests/csv.yml:a.v1.0.0", "manifests/crd.json:as.example.com", "manifests/svc.yaml:one", "manifests/svc.yaml:two"}, names)
	assert.Equal(t, []string{"manifests/notes.txt"}, b.Ignored)
	assert.Equal(t, []string{"stable", "fast"}, b.Annotations.Channels())
	assert.Equal(t, "a", b.Package())
	require.Len(t, b.Properties, 1)
	assert.Equal(t, "olm.maxOpenShiftVersion", b.Properties[0].Type)
	require.Len(t, b.Dependencies, 1)
	assert.Equal(t, "b", Str(b.Dependencies[0].Value, "packageName"))
}

func TestLoadFindsNestedBundle(t *testing.T) {
	fsys := fstest.MapFS{
		"release-config.yaml":              {Data: []byte("a: 1\n")},
		"bundle/manifests/csv.yaml":        {Data: []byte(minimalCSV)},
		"bundle/metadata/annotations.yaml": {Data: []byte("annotations: {}\n")},
		"docs/manifests/not-a-bundle.yaml": {Data: []byte("kind: ConfigMap\n")},
	}
	b, err := Load(fsys)
	require.NoError(t, err)
	assert.Equal(t, "bundle", b.Root)
	assert.Equal(t, "manifests/csv.yaml", b.CSV.Object.File, "files are named relative to the bundle root")
}

func TestLoadErrors(t *testing.T) {
	_, err := Load(fstest.MapFS{"README.md": {Data: []byte("x")}})
	assert.ErrorIs(t, err, ErrNoCSV)
	assert.Contains(t, err.Error(), "no manifests/ directory")

	_, err = Load(fstest.MapFS{"csv.yaml": {Data: []byte(minimalCSV)}})
	assert.ErrorIs(t, err, ErrNoCSV)
	assert.Contains(t, err.Error(), "sits at the top")

	_, err = Load(fstest.MapFS{
		"a/manifests/csv.yaml": {Data: []byte(minimalCSV)},
		"b/manifests/csv.yaml": {Data: []byte(minimalCSV)},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "2 bundles found below this directory (a, b)")

	b, err := Load(fstest.MapFS{"manifests/a.yaml": {Data: []byte(minimalCSV)}, "manifests/b.yaml": {Data: []byte(minimalCSV)}})
	assert.ErrorIs(t, err, ErrMultipleCSVs)
	assert.NotNil(t, b.CSV)
}

func TestCSVTypeErrorsKeepTheRest(t *testing.T) {
	b, err := ParseCSVFile("csv.yaml", []byte(minimalCSV+"  release: 1\n  minKubeVersion: 1.21.0\n  installModes:\n  - type: OwnNamespace\n    supported: true\n"))
	require.NoError(t, err)
	require.Len(t, b.CSV.TypeErrors, 1)
	assert.Equal(t, "spec.release", b.CSV.TypeErrors[0].Field)
	assert.Equal(t, "1.21.0", b.CSV.Spec.MinKubeVersion, "fields after the bad one are still read")
	assert.Len(t, b.CSV.Spec.InstallModes, 1)
	v, _ := Lookup(b.CSV.Object.Map(), "spec", "release")
	assert.Equal(t, int64(1), v, "the object itself is untouched")
}

func TestParseCSVFileSaysWhatTheFileIs(t *testing.T) {
	for file, want := range map[string]string{
		"testdata/messages/widgets.crd.yaml": "the file holds CustomResourceDefinition widgets.example.com, and no document with kind: ClusterServiceVersion",
		"testdata/messages/empty.yaml":       "the file holds no YAML document",
	} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		_, err = ParseCSVFile(file, data)
		require.ErrorIs(t, err, ErrNoCSV)
		assert.Contains(t, err.Error(), want)
	}
}

// PeekPackage names the package Load would, from metadata alone, or ""
// when only loading could tell.
func TestPeekPackage(t *testing.T) {
	csv := &fstest.MapFile{Data: []byte(minimalCSV)}
	ann := func(pkg string) *fstest.MapFile {
		return &fstest.MapFile{Data: []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: " + pkg + "\n")}
	}
	cases := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"top", fstest.MapFS{"manifests/a.clusterserviceversion.yaml": csv, "metadata/annotations.yaml": ann("etcd")}, "etcd"},
		{"nested", fstest.MapFS{"bundle/manifests/a.clusterserviceversion.yaml": csv, "bundle/metadata/annotations.yaml": ann("nested")}, "nested"},
		// Load prefers annotations.* over another file holding annotations.
		{"annotations file wins", fstest.MapFS{"manifests/a.clusterserviceversion.yaml": csv, "metadata/a.yaml": ann("other"), "metadata/annotations.yaml": ann("right")}, "right"},
		{"no package annotation", fstest.MapFS{"manifests/a.clusterserviceversion.yaml": csv, "metadata/annotations.yaml": {Data: []byte("annotations: {}\n")}}, ""},
		{"annotations do not parse", fstest.MapFS{"manifests/a.clusterserviceversion.yaml": csv, "metadata/annotations.yaml": {Data: []byte("annotations: [\n")}}, ""},
		{"not a bundle", fstest.MapFS{"README.md": {Data: []byte("x")}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, PeekPackage(tc.fsys))
			b, _ := Load(tc.fsys)
			if tc.want != "" {
				require.NotNil(t, b)
				assert.Equal(t, tc.want, b.Package(), "the look-up agrees with Load")
			}
		})
	}
	assert.Equal(t, "", PeekPackageDir(t.TempDir()+"/missing", LoadOptions{}))
}

// Like OLM, the metadata file listing dependencies is the dependencies
// file whatever its name (pelorus-operator keeps them in properties.yaml).
func TestLoadFindsMetadataListsByContent(t *testing.T) {
	fsys := fstest.MapFS{
		"manifests/csv.yaml":        {Data: []byte(minimalCSV)},
		"metadata/annotations.yaml": {Data: []byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: a\n")},
		"metadata/properties.yaml":  {Data: []byte("dependencies:\n- type: olm.package\n  value: {packageName: b, version: 1.0.0}\n")},
		"metadata/extra.yaml":       {Data: []byte("properties:\n- type: olm.label\n  value: {label: x}\n")},
	}
	b, err := Load(fsys)
	require.NoError(t, err)
	require.NotNil(t, b.DependenciesFile)
	assert.Equal(t, "metadata/properties.yaml", b.DependenciesFile.Name)
	require.Len(t, b.Dependencies, 1)
	assert.Equal(t, "b", Str(b.Dependencies[0].Value, "packageName"))
	require.NotNil(t, b.PropertiesFile)
	assert.Equal(t, "metadata/extra.yaml", b.PropertiesFile.Name)
	require.Len(t, b.Properties, 1)
	assert.Equal(t, "olm.label", b.Properties[0].Type)
}
