package graph

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// A skipRange is read against a channel as runs of its entries in version
// order, found by binary search, never as an edge per covered bundle: a
// channel whose every entry has a skipRange over all before it would
// otherwise cost n² edges.

// versionOrder is a list of bundles that have a version, ascending by
// version (ties in the order given).
type versionOrder struct {
	names []string
	vers  []semver.Version
	pos   map[string]int
}

// newVersionOrder orders the names that have a version; names without one
// are left out (no skipRange covers them). Duplicates are kept once.
func newVersionOrder(names []string, versions map[string]semver.Version) *versionOrder {
	o := &versionOrder{pos: make(map[string]int, len(names))}
	for _, n := range names {
		if _, dup := o.pos[n]; dup {
			continue
		}
		if _, ok := versions[n]; ok {
			o.pos[n] = -1
			o.names = append(o.names, n)
		}
	}
	sort.SliceStable(o.names, func(i, j int) bool { return versions[o.names[i]].LT(versions[o.names[j]]) })
	o.vers = make([]semver.Version, len(o.names))
	for i, n := range o.names {
		o.vers[i] = versions[n]
		o.pos[n] = i
	}
	return o
}

// span is the run [lo, hi) of a versionOrder.
type span struct{ lo, hi int }

// covered lists the runs of o whose versions r admits; text is the range
// as written. A range is a combination of comparisons against the
// versions it names, so it answers alike for every version between two
// of them: one test per such stretch decides it.
func (o *versionOrder) covered(r semver.Range, text string) []span {
	n := len(o.vers)
	if n == 0 || r == nil {
		return nil
	}
	th, ok := thresholds(text)
	if !ok {
		return o.scan(r)
	}
	var cuts []int
	for _, t := range th {
		cuts = append(cuts,
			sort.Search(n, func(i int) bool { return o.vers[i].GTE(t) }),
			sort.Search(n, func(i int) bool { return o.vers[i].GT(t) }))
	}
	cuts = append(cuts, 0, n)
	sort.Ints(cuts)
	var out []span
	for i := 0; i+1 < len(cuts); i++ {
		lo, hi := cuts[i], cuts[i+1]
		if lo == hi || !r(o.vers[lo]) {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].hi == lo {
			out[k].hi = hi
		} else {
			out = append(out, span{lo, hi})
		}
	}
	return out
}

// scan is covered by testing every version: for a range whose versions
// could not be read out of its text.
func (o *versionOrder) scan(r semver.Range) []span {
	var out []span
	for i, v := range o.vers {
		if !r(v) {
			continue
		}
		if k := len(out) - 1; k >= 0 && out[k].hi == i {
			out[k].hi = i + 1
		} else {
			out = append(out, span{i, i + 1})
		}
	}
	return out
}

// without is spans with position p taken out (a skipRange gives no edge
// from its own entry).
func without(spans []span, p int) []span {
	for k, s := range spans {
		if p < s.lo || p >= s.hi {
			continue
		}
		out := append([]span(nil), spans[:k]...)
		if s.lo < p {
			out = append(out, span{s.lo, p})
		}
		if p+1 < s.hi {
			out = append(out, span{p + 1, s.hi})
		}
		return append(out, spans[k+1:]...)
	}
	return spans
}

// thresholds are the versions a range compares against, read from its
// text the way semver.ParseRange reads it (a version follows an operator
// and starts with a digit; a wildcard 1.x or 1.2.x compares against its
// floor and the next major or minor). Extra versions do no harm; false
// when a version does not parse, and the caller tests every version.
func thresholds(text string) ([]semver.Version, bool) {
	var out []semver.Version
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ' ' || r == '|' || r == '\t' }) {
		i := strings.IndexAny(f, "0123456789")
		if i < 0 {
			if strings.Trim(f, "<>=!") != "" {
				return nil, false
			}
			continue
		}
		vs := f[i:]
		parts := strings.Split(vs, ".")
		if !slices.Contains(parts, "x") {
			v, err := semver.Parse(vs)
			if err != nil {
				return nil, false
			}
			out = append(out, v)
			continue
		}
		var nums []uint64
		for _, p := range parts {
			if p == "x" {
				break
			}
			u, err := strconv.ParseUint(p, 10, 64)
			if err != nil {
				return nil, false
			}
			nums = append(nums, u)
		}
		if len(nums) == 0 {
			return nil, false
		}
		major := nums[0]
		out = append(out, semver.Version{Major: major}, semver.Version{Major: major + 1})
		if len(nums) > 1 {
			out = append(out, semver.Version{Major: major, Minor: nums[1]}, semver.Version{Major: major, Minor: nums[1] + 1})
		}
	}
	return out, true
}

// unvisited hands out the positions of a versionOrder not taken yet, each
// once, skipping taken runs in near-constant time: a walk that meets the
// same range from many entries touches each bundle once.
type unvisited struct{ next []int }

func newUnvisited(n int) *unvisited {
	u := &unvisited{next: make([]int, n+1)}
	for i := range u.next {
		u.next[i] = i
	}
	return u
}

// find is the first position at or after i not taken (n when none).
func (u *unvisited) find(i int) int {
	root := i
	for u.next[root] != root {
		root = u.next[root]
	}
	for u.next[i] != root {
		u.next[i], i = root, u.next[i]
	}
	return root
}

func (u *unvisited) take(i int) { u.next[i] = i + 1 }
