package index

import (
	"math/rand"
	"strings"
	"testing"
)

func TestParseRelease(t *testing.T) {
	good := []string{"", "1", "10", "alpha", "alpha.1", "0", "a-b.0.x-1", "12345678901234567890"}
	for _, s := range good {
		if _, err := ParseRelease(s); err != nil {
			t.Errorf("ParseRelease(%q): %v", s, err)
		}
	}
	bad := map[string]string{
		"01":                    "leading zero",
		"1..2":                  "empty identifier",
		".1":                    "empty identifier",
		"1.":                    "empty identifier",
		"1+build":               "build metadata",
		"a_b":                   "only [0-9A-Za-z-]",
		"123456789012345678901": "limit is 20",
	}
	for s, want := range bad {
		_, err := ParseRelease(s)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseRelease(%q) = %v, want an error about %q", s, err, want)
		}
	}
}

// The ascending example of FORMATS.md "The release field".
func TestVersionOrderExample(t *testing.T) {
	seq := [][2]string{{"0.3.0", ""}, {"0.3.0", "1"}, {"0.3.0", "2"}, {"0.3.0", "10"}, {"0.3.0", "alpha"},
		{"0.3.0", "alpha.1"}, {"0.3.0", "beta"}, {"0.4.0", ""}}
	var vs []Version
	for _, p := range seq {
		v, err := ParseVersion(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		vs = append(vs, v)
	}
	for i := range vs {
		for j := range vs {
			got := vs[i].Compare(vs[j])
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got != want {
				t.Errorf("compare %v with %v = %d, want %d", vs[i], vs[j], got, want)
			}
		}
	}
	// Prereleases and build metadata follow semver.
	for _, c := range []struct {
		a, b string
		want int
	}{{"1.0.0-rc.1", "1.0.0", -1}, {"1.0.0+build.1", "1.0.0", 0}, {"0.9.4-clusterwide", "0.9.4", -1}, {"1.10.0", "1.9.0", 1}} {
		got, err := CompareVersions(c.a, "", c.b, "")
		if err != nil || got != c.want {
			t.Errorf("CompareVersions(%s, %s) = %d, %v; want %d", c.a, c.b, got, err, c.want)
		}
	}
	if _, err := ParseVersion("1.0", ""); err == nil {
		t.Error("1.0 accepted as a version")
	}
	if _, err := ParseVersion("1.0.0+b", "1"); err == nil {
		t.Error("build metadata accepted with a release")
	}
}

func randomRelease(r *rand.Rand) Release {
	if r.Intn(4) == 0 {
		return nil
	}
	ids := []string{"0", "1", "2", "10", "alpha", "beta", "a-1", "9"}
	n := 1 + r.Intn(3)
	var out Release
	for i := 0; i < n; i++ {
		out = append(out, ids[r.Intn(len(ids))])
	}
	return out
}

// Ordering is a total order: antisymmetric and transitive.
func TestCompareReleasesTotalOrder(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 5000; i++ {
		a, b, c := randomRelease(r), randomRelease(r), randomRelease(r)
		ab, ba := CompareReleases(a, b), CompareReleases(b, a)
		if ab != -ba {
			t.Fatalf("not antisymmetric: %v %v", a, b)
		}
		if ab <= 0 && CompareReleases(b, c) <= 0 && CompareReleases(a, c) > 0 {
			t.Fatalf("not transitive: %v %v %v", a, b, c)
		}
		if (ab == 0) != (a.String() == b.String()) {
			t.Fatalf("equal releases differ: %v %v", a, b)
		}
	}
}

func FuzzCompareReleases(f *testing.F) {
	f.Add("1", "2")
	f.Add("alpha.1", "alpha")
	f.Add("10", "9")
	f.Fuzz(func(t *testing.T, a, b string) {
		ra, errA := ParseRelease(a)
		rb, errB := ParseRelease(b)
		if errA != nil || errB != nil {
			return
		}
		if CompareReleases(ra, rb) != -CompareReleases(rb, ra) {
			t.Fatalf("not antisymmetric: %q %q", a, b)
		}
		if ra.String() != a {
			t.Fatalf("round trip %q -> %q", a, ra.String())
		}
	})
}

func TestSortBundlesDeterministic(t *testing.T) {
	var ns []*node
	for _, v := range []string{"1.0.0", "0.9.0", "1.0.0-rc.1", "2.0.0", "1.1.0"} {
		pv, _ := ParseVersion(v, "")
		ns = append(ns, &node{Name: "op.v" + v, Version: pv})
	}
	want := "op.v0.9.0 op.v1.0.0-rc.1 op.v1.0.0 op.v1.1.0 op.v2.0.0"
	r := rand.New(rand.NewSource(2))
	for i := 0; i < 20; i++ {
		r.Shuffle(len(ns), func(i, j int) { ns[i], ns[j] = ns[j], ns[i] })
		SortBundles(ns)
		var got []string
		for _, n := range ns {
			got = append(got, n.Name)
		}
		if strings.Join(got, " ") != want {
			t.Fatalf("got %v", got)
		}
	}
}
