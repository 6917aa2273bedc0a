package draw

import (
	"testing"

	"github.com/blang/semver/v4"
)

// fuzzVersions are sorted versions with prereleases, build metadata and
// equal versions side by side.
var fuzzVersions = func() []semver.Version {
	var vs []semver.Version
	for _, s := range []string{"0.0.1", "0.9.0", "1.0.0-alpha", "1.0.0-rc.1", "1.0.0", "1.0.0+b2", "1.0.1", "1.1.0", "1.2.0-0", "1.2.0",
		"1.10.3", "2.0.0", "2.1.0+build.5", "2.1.1", "3.0.0", "10.0.0"} {
		vs = append(vs, semver.MustParse(s))
	}
	return vs
}()

// FuzzCoverage: whatever the range, the versions coverage admits are
// exactly those blang's Range admits, or neither parses it.
func FuzzCoverage(f *testing.F) {
	for _, s := range []string{"<1.2.0", ">=1.0.0 <1.2.0", "> 1.0.0 <= 2.0.0", "=1.0.0", "1.0.0", ">=2.0.0 || <1.0.0", "1.x", ">=1.x <2.x",
		"!=1.0.0", ">=1.0.0 !1.1.0", "<1.2.0-alpha", ">1.0.0-rc.1 <1.0.0", "==2.1.0", "<= 1.0.0 || >= 3.0.0 <10.0.0", ">=1.0.0 ||", "|| <1.0.0", "> ", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := semver.ParseRange(s)
		ivs, ok := coverage(s, fuzzVersions)
		if (err == nil) != ok {
			t.Fatalf("range %q: blang error %v, coverage ok %v", s, err, ok)
		}
		if !ok {
			return
		}
		in := make([]bool, len(fuzzVersions))
		last := 0
		for _, iv := range ivs {
			if iv.lo < last || iv.lo >= iv.hi || iv.hi > len(fuzzVersions) {
				t.Fatalf("range %q: intervals %v not sorted, disjoint and within %d", s, ivs, len(fuzzVersions))
			}
			last = iv.hi
			for p := iv.lo; p < iv.hi; p++ {
				in[p] = true
			}
		}
		for p, v := range fuzzVersions {
			if in[p] != r(v) {
				t.Errorf("range %q, version %s: covered %v, blang %v", s, v, in[p], r(v))
			}
		}
	})
}
