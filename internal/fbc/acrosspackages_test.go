package fbc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestBundleInTwoPackagesRefused: validate passed a catalog whose bundle
// (name, version, image) is in two packages, which migrate --to sqlite
// then refused; validate, whole or a package at a time, now refuses it.
func TestBundleInTwoPackagesRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	blobs := `{"schema":"olm.package","name":"p","defaultChannel":"c"}
{"schema":"olm.package","name":"q","defaultChannel":"c"}
{"schema":"olm.channel","package":"p","name":"c","entries":[{"name":"b.v1"}]}
{"schema":"olm.channel","package":"q","name":"c","entries":[{"name":"b.v1"}]}
{"schema":"olm.bundle","package":"p","name":"b.v1","image":"example.com/b:v1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","package":"q","name":"b.v1","image":"example.com/b:v1","properties":[{"type":"olm.package","value":{"packageName":"q","version":"1.0.0"}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(blobs), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	whole := Validate(c)
	perPackage, err := ValidateDir(context.Background(), dir, false, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for name, fs := range map[string][]any{"Validate": toAny(whole), "ValidateDir": toAny(perPackage)} {
		if len(fs) != 1 {
			t.Fatalf("%s: want one finding, got %v", name, fs)
		}
	}
	f := perPackage[0]
	if f.Rule != "catalog-bundle-packages" || f.Line != 6 || f.Message != "bundle b.v1 (version 1.0.0, image example.com/b:v1) of package q is also in package p (c.json:5)" {
		t.Errorf("got %+v", f)
	}
	if whole[0].Message != f.Message {
		t.Errorf("Validate and ValidateDir differ: %q, %q", whole[0].Message, f.Message)
	}
}

func toAny[T any](s []T) []any {
	out := make([]any, len(s))
	for i := range s {
		out[i] = s[i]
	}
	return out
}
