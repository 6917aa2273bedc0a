package resolve

import (
	"reflect"
	"strings"
	"testing"
)

// FuzzParseClusterExtension: any input gives ClusterExtensions or an
// error, never a panic; what it accepts names a package and a known
// policy, and reads the same twice. Seeds: testdata/fuzz.
func FuzzParseClusterExtension(f *testing.F) {
	f.Add([]byte(extensionYAML))
	f.Fuzz(func(t *testing.T, data []byte) {
		exts, err := ParseClusterExtension(data)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(exts) == 0 {
			t.Fatal("no error and no ClusterExtension")
		}
		for _, e := range exts {
			if e.PackageName == "" {
				t.Fatalf("accepted without a package: %+v", e)
			}
			switch e.UpgradeConstraintPolicy {
			case "", PolicyCatalogProvided, PolicySelfCertified:
			default:
				t.Fatalf("accepted policy %q", e.UpgradeConstraintPolicy)
			}
			if e.Installed != nil && (e.Installed.Name == "" || e.Installed.Version == "") {
				t.Fatalf("accepted an installed bundle without name or version: %+v", e.Installed)
			}
		}
		again, err := ParseClusterExtension(data)
		if err != nil || !reflect.DeepEqual(exts, again) {
			t.Fatalf("second read differs: %v", err)
		}
	})
}

// FuzzVersionRange: any range text parses or is refused with the range
// library's error, never a panic, and the same way twice; a range that
// parses answers for every version of a fixed set, and a range of one
// full version admits that version.
func FuzzVersionRange(f *testing.F) {
	for _, s := range []string{">=1.0.0 <2.0.0 || 3.x", "1.2 - 1.10", "~1.2", "^0.0.3", "!=2.x", "1.0.0-beta - 1.0.0", "v1.2.3+build"} {
		f.Add(s)
	}
	versions := []extRangeVersion{{}, {major: 1, minor: 2, patch: 3}, {major: 1, pre: "beta.1"}, {major: 2, minor: 10, pre: "0"}, {major: 18446744073709551615}}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseExtRange(s)
		r2, err2 := parseExtRange(s)
		if (err == nil) != (err2 == nil) {
			t.Fatalf("%q parses one way, then another", s)
		}
		if err != nil {
			msg := err.Error()
			if !strings.HasPrefix(msg, "improper constraint: ") && msg != errExtRangeBound.Error() &&
				!strings.HasPrefix(msg, "constraint string is too long") && !strings.HasPrefix(msg, "too many constraint groups") {
				t.Fatalf("%q: unexpected error %q", s, msg)
			}
			return
		}
		for _, v := range versions {
			if r.contains(v) != r2.contains(v) {
				t.Fatalf("%q answers %s two ways", s, v)
			}
		}
		if v, ok := rangeLooseVersion(s); ok && !strings.ContainsAny(s, " ,|<>=~^!*xX") && strings.Count(strings.TrimPrefix(s, "v"), ".") == 2 {
			if !r.contains(v) && v.pre == "" {
				t.Fatalf("%q does not admit %s", s, v)
			}
		}
	})
}
