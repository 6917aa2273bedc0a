package fbc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"testing/fstest"
)

// FuzzLoad feeds arbitrary bytes to the catalog loader as a JSON or YAML
// file: it must not panic, every problem must be a *LoadError, and a catalog
// that loads must write and load back to the same bytes. Seeds live in
// testdata/fuzz/FuzzLoad as well as below.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{
		`{"schema":"olm.package","name":"op","defaultChannel":"stable","icon":{"base64data":"aGk=","mediatype":"image/png"}}`,
		`{"schema":"olm.channel","name":"s","package":"op","entries":[{"name":"a","replaces":"b","skips":["c"],"skipRange":"<1.0.0"}]}{"schema":"x.other","package":"op"}`,
		`{"schema":"olm.bundle","name":"a","package":"op","image":"i","properties":[{"type":"olm.package","value":{"packageName":"op","version":"1.0.0"}}],"relatedImages":[{"name":"","image":"i"}]}`,
		"schema: olm.package\nname: op\n---\nschema: olm.deprecations\npackage: op\nentries: []\n",
		"{\"schema\": 1}", "[]", "null", "{", "schema: [", "a: &x {b: *x}\n",
	} {
		f.Add("c.json", []byte(s))
		f.Add("c.yaml", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name != "c.json" && name != "c.yaml" {
			name = "c.json"
		}
		c, err := Load(fstest.MapFS{name: {Data: data}})
		if err != nil {
			for _, e := range LoadErrors(err) {
				var le *LoadError
				if !errors.As(e, &le) {
					t.Fatalf("error of type %T, want *LoadError: %v", e, e)
				}
			}
			return
		}
		var first bytes.Buffer
		if err := Write(&first, c, FormatJSON); err != nil {
			return // values JSON cannot hold (none expected), not a crash
		}
		back := &Catalog{}
		if err := back.LoadFile("back.json", first.Bytes()); err != nil {
			t.Fatalf("written catalog does not load: %v\n%s", err, first.Bytes())
		}
		var second bytes.Buffer
		if err := Write(&second, back, FormatJSON); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Fatalf("write/load/write changed the catalog:\n%s\nvs\n%s", first.Bytes(), second.Bytes())
		}
		_ = Validate(c)
	})
}

// FuzzScan feeds arbitrary bytes, as a JSON or YAML file, to Scan and to
// Load: every package Each hands over, and the errors, must be Load's.
// classify's hand-written key reader (topLevelString) is what this mostly
// exercises. Seeds live in testdata/fuzz/FuzzScan as well as below.
func FuzzScan(f *testing.F) {
	for _, s := range []string{
		`{"schema":"olm.bundle","package":"a","name":"x"}{"package":"b","schema":"olm.channel","name":"s","entries":[]}`,
		`{"schema":"olm.bundle","package":"a","Package":"b"}`,
		`{"schema":"olm.bundle","package":"a","package":"b"}`,
		`{"schema":"olm.package","name":"p\u0041"} {"schema":"olm.package","name":"q","x":{"name":"}\"{"}}`,
		`{"schema":"custom","package":"a","v":[1,{"a":"]"}]}`,
		"schema: olm.package\nname: op\n---\nnull\n---\nschema: olm.bundle\npackage: 3\n",
		`{"schema":"olm.bundle","package":7}`, `{"schema" : "olm.bundle" , "package" : "sp" }`,
	} {
		f.Add("c.json", []byte(s))
		f.Add("c.yaml", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		if name != "c.json" && name != "c.yaml" {
			name = "c.json"
		}
		fsys := fstest.MapFS{name: {Data: data}}
		whole, loadErr := Load(fsys)
		s, err := Scan(fsys, LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		err = s.Each(context.Background(), func(pkg string, c *Catalog) error {
			if want := whole.Package(pkg); !reflect.DeepEqual(c, want) {
				t.Errorf("package %q: %+v, want %+v", pkg, c, want)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(s.Err()) != fmt.Sprint(loadErr) {
			t.Errorf("errors %v, want %v", s.Err(), loadErr)
		}
		for _, pkg := range whole.PackageNames() {
			if len(s.refs[pkg]) == 0 {
				t.Errorf("package %q not found by the scan", pkg)
			}
		}
	})
}
