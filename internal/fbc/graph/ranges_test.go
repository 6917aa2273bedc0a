package graph

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
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

// TestNextStepsEqualEveryCandidate: OLM v0's and v1's next steps read off
// the painted runs are those found by testing every entry, over random
// channels (replaces chains, skips, skipRanges of every form, versions
// shared by several bundles, deprecations).
func TestNextStepsEqualEveryCandidate(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(41))
	ranges := []string{"", "", "<2.0.0", ">=1.0.0 <1.5.0", "<3.0.0 || >=4.0.0", "1.x", "!=1.2.0 <3.0.0", ">=0.5.0"}
	byRange := map[string]int{}
	for round := range 200 {
		var sb strings.Builder
		sb.WriteString(`{"schema":"olm.package","name":"p","defaultChannel":"a"}` + "\n")
		n := 3 + rnd.Intn(12)
		for i := range n {
			fmt.Fprintf(&sb, `{"schema":"olm.bundle","package":"p","name":"b%d","properties":[{"type":"olm.package","value":{"packageName":"p","version":"%d.%d.0"}}]}`+"\n", i, rnd.Intn(5), rnd.Intn(6))
		}
		for _, ch := range []string{"a", "b"} {
			var entries []string
			for i := range n {
				if rnd.Intn(4) == 0 {
					continue
				}
				e := fmt.Sprintf(`{"name":"b%d"`, i)
				if i > 0 && rnd.Intn(4) > 0 {
					e += fmt.Sprintf(`,"replaces":"b%d"`, i-1)
				}
				if rnd.Intn(5) == 0 {
					e += fmt.Sprintf(`,"skips":["b%d"]`, rnd.Intn(n))
				}
				if r := ranges[rnd.Intn(len(ranges))]; r != "" {
					e += fmt.Sprintf(`,"skipRange":%q`, r)
				}
				entries = append(entries, e+"}")
			}
			fmt.Fprintf(&sb, `{"schema":"olm.channel","package":"p","name":%q,"entries":[%s]}`+"\n", ch, strings.Join(entries, ","))
		}
		fmt.Fprintf(&sb, `{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"b%d"},"message":"x"}]}`+"\n", rnd.Intn(n))
		c := &fbc.Catalog{}
		if err := c.LoadFile("c.json", []byte(sb.String())); err != nil {
			t.Fatal(err)
		}
		p, err := NewPackage(c, "p")
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			from := p.bundle(fmt.Sprintf("b%d", i))
			for _, g := range p.Channels {
				got, gok, gerr := g.NextV0(from)
				want, wok, werr := naiveNextV0(g, from)
				if gok {
					byRange["v0 "+got.Edge]++
				}
				if got != want || gok != wok || (gerr == nil) != (werr == nil) {
					t.Fatalf("round %d, channel %s, from %s: NextV0 %+v %v, every candidate gives %+v %v", round, g.Name, from, got, gok, want, wok)
				}
			}
		}
	}
	if byRange["v0 "+EdgeSkipRange] < 50 || byRange["v0 "+EdgeReplaces] < 50 {
		t.Errorf("too few steps of each kind to compare: %v", byRange)
	}
}

func naiveNextV0(g *ChannelGraph, from Bundle) (Step, bool, error) {
	if g.chainErr != nil {
		return Step{}, false, g.chainErr
	}
	var best Step
	bestRank := -1
	for _, i := range g.candidates(from) {
		r, onChain := g.rank[g.Entries[i].Name]
		if !onChain || (bestRank >= 0 && r >= bestRank) {
			continue
		}
		if st, ok := g.edge(i, from); ok {
			best, bestRank = st, r
		}
	}
	return best, bestRank >= 0, nil
}
