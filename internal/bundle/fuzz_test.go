package bundle

import (
	"testing"
	"testing/fstest"
)

// The fuzz targets feed arbitrary bytes to each parser: none may panic or
// hang, and every failure must be an error value. Seeds live in
// testdata/fuzz/<target>/ as well as below.

func FuzzParseCSVFile(f *testing.F) {
	f.Add([]byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a.v1.0.0\nspec:\n  version: 1.0.0\n  release: 1\n  installModes:\n  - type: OwnNamespace\n    supported: yes\n"))
	f.Add([]byte("kind: ClusterServiceVersion\nspec: {installModes: [1, {type: [x]}], customresourcedefinitions: {owned: 3}}\nmetadata: {annotations: {a: 1}}\n"))
	f.Add([]byte("kind: ClusterServiceVersion\nspec: []\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := ParseCSVFile("csv.yaml", data)
		if err == nil && b.CSV == nil {
			t.Fatal("no error and no CSV")
		}
	})
}

func FuzzLoadAnnotations(f *testing.F) {
	f.Add([]byte("annotations:\n  operators.operatorframework.io.bundle.package.v1: a\n  operators.operatorframework.io.bundle.channels.v1: a,b\n"))
	f.Add([]byte("annotations: [1]\n"))
	f.Add([]byte("annotations:\n  x: {y: 1}\n"))
	csv := []byte("apiVersion: operators.coreos.com/v1alpha1\nkind: ClusterServiceVersion\nmetadata:\n  name: a.v1.0.0\n")
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := fstest.MapFS{
			"manifests/csv.yaml":         {Data: csv},
			"metadata/annotations.yaml":  {Data: data},
			"metadata/properties.yaml":   {Data: data},
			"metadata/dependencies.yaml": {Data: data},
		}
		b, err := Load(fsys)
		if err == nil && b.Annotations != nil {
			_ = b.Annotations.Channels()
			_ = b.Annotations.DefaultChannel()
		}
	})
}
