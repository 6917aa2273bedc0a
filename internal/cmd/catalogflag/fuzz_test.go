package catalogflag

import (
	"strings"
	"testing"
)

// FuzzParse: any --catalog value parses or is refused, without panicking;
// what parses has a source and, when named, a valid name, and a derived
// name is always valid.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"catalog/", "catalog/=10", "quay.io/me/index:v4=-5", "localhost:5000/x@sha256:00",
		"name=a,source=b,priority=3,namespace=olm", "source=a,source=b", "=", "a==1", "name=,source=x",
		"priority=99999999999999999999,source=a", "ÄÖ.db=1",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		s, err := Parse(v)
		if err != nil {
			return
		}
		if s.Source == "" {
			t.Fatalf("%q parsed without a source: %+v", v, s)
		}
		if s.Name != "" && !validName(s.Name) {
			t.Fatalf("%q parsed with an invalid name %q", v, s.Name)
		}
		if n := NameOf(s.Source); !validName(n) || strings.Contains(n, "/") {
			t.Fatalf("NameOf(%q) = %q, not a valid CatalogSource name", s.Source, n)
		}
	})
}
