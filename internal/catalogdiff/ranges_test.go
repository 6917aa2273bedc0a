package catalogdiff

import (
	"fmt"
	"math/rand"
	"reflect"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// TestRangeDiffEqualsEdgeListDiff: comparing skipRanges as ranges gives
// the edges added and lost that comparing every expanded edge gives, over
// random pairs of channels (entries added and removed, versions moved,
// skipRanges kept, changed, added and dropped).
func TestRangeDiffEqualsEdgeListDiff(t *testing.T) {
	t.Parallel()
	rnd := rand.New(rand.NewSource(40))
	ranges := []string{"", "", "<2.0.0", ">=1.0.0 <1.5.0", "<3.0.0 || >=4.0.0", "1.x", "!=1.2.0 <3.0.0", "not a range"}
	channel := func(versions map[string]semver.Version, names []string) *fbc.Channel {
		ch := &fbc.Channel{Name: "s", Package: "p"}
		for i, n := range names {
			e := fbc.ChannelEntry{Name: n, SkipRange: ranges[rnd.Intn(len(ranges))]}
			if i > 0 && rnd.Intn(3) > 0 {
				e.Replaces = names[rnd.Intn(i)]
			}
			if rnd.Intn(4) == 0 {
				e.Skips = []string{names[rnd.Intn(len(names))]}
			}
			ch.Entries = append(ch.Entries, e)
		}
		return ch
	}
	for round := range 300 {
		ov, nv := map[string]semver.Version{}, map[string]semver.Version{}
		var on, nn []string
		for i := range 12 {
			name := fmt.Sprintf("b%d", i)
			v := semver.Version{Major: uint64(rnd.Intn(5)), Minor: uint64(rnd.Intn(6))}
			if rnd.Intn(6) > 0 {
				ov[name] = v
			}
			if rnd.Intn(5) == 0 {
				v.Minor++
			}
			if rnd.Intn(6) > 0 {
				nv[name] = v
			}
			if rnd.Intn(5) > 0 {
				on = append(on, name)
			}
			if rnd.Intn(5) > 0 {
				nn = append(nn, name)
			}
		}
		oc, nc := channel(ov, on), channel(nv, nn)
		if round%3 == 0 {
			// Same entries and ranges, some versions moved.
			nc = &fbc.Channel{Name: "s", Package: "p", Entries: oc.Entries}
			nn = on
		}
		oe, ne := map[string]bool{}, map[string]bool{}
		for _, n := range on {
			oe[n] = true
		}
		for _, n := range nn {
			ne[n] = true
		}
		gotA, gotR := diffEdges(oc, nc, ov, nv, oe, ne)
		wantA, wantR := expandedDiff(oc, nc, ov, nv)
		if !reflect.DeepEqual(gotA, wantA) || !reflect.DeepEqual(gotR, wantR) {
			t.Fatalf("round %d: added %v removed %v; expanded edges give added %v removed %v", round, gotA, gotR, wantA, wantR)
		}
	}
}

// expandedDiff is the diff of every expanded edge, as opm compared
// channels before ranges.
func expandedDiff(oc, nc *fbc.Channel, ov, nv map[string]semver.Version) (added, removed []Edge) {
	all := func(ch *fbc.Channel, v map[string]semver.Version) map[edgeKey]Edge {
		out := map[edgeKey]Edge{}
		for _, e := range graph.ChannelEdges(ch, v) {
			out[edgeKey{e.From, e.To, e.Kind}] = Edge{From: e.From, To: e.To, Kind: e.Kind, Range: e.SkipRange}
		}
		return out
	}
	o, n := all(oc, ov), all(nc, nv)
	for _, k := range sortedEdgeKeys(n) {
		if _, ok := o[k]; !ok {
			added = append(added, n[k])
		}
	}
	for _, k := range sortedEdgeKeys(o) {
		if _, ok := n[k]; !ok {
			removed = append(removed, o[k])
		}
	}
	return added, removed
}
