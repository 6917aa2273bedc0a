package graph

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/blang/semver/v4"
)

// TestCoveredEqualsScan: the runs read by binary search between the
// versions a range names are the runs found by testing every version,
// over ranges of every form semver.ParseRange reads (wildcards, !=, ||,
// pre-releases, build metadata, spaces after operators).
func TestCoveredEqualsScan(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(40))
	versions := map[string]semver.Version{}
	var names []string
	for i := range 300 {
		s := fmt.Sprintf("%d.%d.%d", rnd.Intn(4), rnd.Intn(4), rnd.Intn(4))
		switch rnd.Intn(6) {
		case 0:
			s += "-rc." + fmt.Sprint(rnd.Intn(3))
		case 1:
			s += "+build" + fmt.Sprint(rnd.Intn(3))
		}
		n := fmt.Sprintf("b%d", i)
		versions[n] = semver.MustParse(s)
		names = append(names, n)
	}
	names = append(names, "unversioned")
	o := newVersionOrder(names, versions)
	if len(o.names) != 300 {
		t.Fatalf("order holds %d bundles, want the 300 with a version", len(o.names))
	}
	ver := func() string {
		if rnd.Intn(5) == 0 {
			if rnd.Intn(2) == 0 {
				return fmt.Sprintf("%d.x", rnd.Intn(4))
			}
			return fmt.Sprintf("%d.%d.x", rnd.Intn(4), rnd.Intn(4))
		}
		s := fmt.Sprintf("%d.%d.%d", rnd.Intn(4), rnd.Intn(4), rnd.Intn(4))
		if rnd.Intn(5) == 0 {
			s += "-rc.1"
		}
		return s
	}
	ops := []string{"", "=", "==", "!=", "!", "<", "<=", ">", ">=", "> ", "<= "}
	tried := 0
	for range 3000 {
		var text string
		for k := range 1 + rnd.Intn(3) {
			if k > 0 {
				text += " || "
			}
			for j := range 1 + rnd.Intn(3) {
				if j > 0 {
					text += " "
				}
				text += ops[rnd.Intn(len(ops))] + ver()
			}
		}
		r, err := semver.ParseRange(text)
		if err != nil {
			continue
		}
		tried++
		if _, ok := thresholds(text); !ok {
			t.Errorf("%q: versions not read from the range", text)
		}
		got, want := o.covered(r, text), o.scan(r)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q: runs %v, testing every version %v", text, got, want)
		}
	}
	if tried < 1000 {
		t.Errorf("only %d ranges parsed", tried)
	}
}

func TestWithout(t *testing.T) {
	t.Parallel()
	sp := []span{{0, 3}, {5, 6}, {8, 10}}
	for _, tc := range []struct {
		p    int
		want string
	}{{0, "[{1 3} {5 6} {8 10}]"}, {1, "[{0 1} {2 3} {5 6} {8 10}]"}, {5, "[{0 3} {8 10}]"}, {4, "[{0 3} {5 6} {8 10}]"}, {9, "[{0 3} {5 6} {8 9}]"}} {
		if got := fmt.Sprint(without(sp, tc.p)); got != tc.want {
			t.Errorf("without %d: %s, want %s", tc.p, got, tc.want)
		}
	}
}
