package draw

import (
	"sort"
	"strings"

	"github.com/blang/semver/v4"
)

// A skipRange is kept as intervals over the channel's bundles sorted by
// version, never as an edge per bundle it covers: a channel whose every
// entry has a skipRange over all before it would otherwise cost the square
// of its size (2,000 bundles, 2 million edges).

// interval is [lo, hi) over positions in version order.
type interval struct{ lo, hi int }

// coverage lists the positions of vs (sorted ascending) that the range s
// admits, as sorted disjoint intervals. ok is false when s does not parse
// (OLM ignores such a range: it covers nothing). The common forms
// (comparators joined by spaces and ||) are read into intervals by binary
// search; anything else (wildcards, !=) is asked of blang's Range version by
// version.
func coverage(s string, vs []semver.Version) ([]interval, bool) {
	r, err := semver.ParseRange(s)
	if err != nil {
		return nil, false
	}
	if ivs, ok := rangeIntervals(s, vs); ok && agrees(ivs, vs, r) {
		return ivs, true
	}
	var out []interval
	for p := range vs {
		if !r(vs[p]) {
			continue
		}
		if n := len(out); n > 0 && out[n-1].hi == p {
			out[n-1].hi++
		} else {
			out = append(out, interval{p, p + 1})
		}
	}
	return out, true
}

// agrees checks intervals read from a range against the range itself at
// every edge: each interval's ends are admitted, their outer neighbours not.
func agrees(ivs []interval, vs []semver.Version, r semver.Range) bool {
	for _, iv := range ivs {
		if !r(vs[iv.lo]) || !r(vs[iv.hi-1]) {
			return false
		}
		if iv.lo > 0 && r(vs[iv.lo-1]) || iv.hi < len(vs) && r(vs[iv.hi]) {
			return false
		}
	}
	if len(ivs) == 0 && len(vs) > 0 && (r(vs[0]) || r(vs[len(vs)-1])) {
		return false
	}
	return true
}

// rangeIntervals reads s as OR-ed groups of AND-ed comparators (<, <=, >,
// >=, =, ==, or none); ok is false for any other form.
func rangeIntervals(s string, vs []semver.Version) ([]interval, bool) {
	var toks []string
	for _, f := range strings.Fields(s) {
		// "> 1.0.0" is read as ">1.0.0", as blang does.
		if n := len(toks); n > 0 && strings.Trim(toks[n-1], "<>=") == "" && toks[n-1] != "" {
			toks[n-1] += f
			continue
		}
		toks = append(toks, f)
	}
	var out []interval
	cur, open := interval{0, len(vs)}, false
	flush := func() bool {
		if !open {
			return false
		}
		if cur.lo < cur.hi {
			out = append(out, cur)
		}
		cur, open = interval{0, len(vs)}, false
		return true
	}
	for _, t := range toks {
		if t == "||" {
			if !flush() {
				return nil, false
			}
			continue
		}
		if strings.ContainsAny(t, "xX*!") {
			return nil, false
		}
		op := t[:len(t)-len(strings.TrimLeft(t, "<>="))]
		v, err := semver.Parse(t[len(op):])
		if err != nil {
			return nil, false
		}
		first := func(pred func(semver.Version) bool) int {
			return sort.Search(len(vs), func(i int) bool { return pred(vs[i]) })
		}
		ge := first(func(x semver.Version) bool { return x.Compare(v) >= 0 })
		gt := first(func(x semver.Version) bool { return x.Compare(v) > 0 })
		var iv interval
		switch op {
		case ">=":
			iv = interval{ge, len(vs)}
		case ">":
			iv = interval{gt, len(vs)}
		case "<":
			iv = interval{0, ge}
		case "<=":
			iv = interval{0, gt}
		case "", "=", "==":
			iv = interval{ge, gt}
		default:
			return nil, false
		}
		cur = interval{max(cur.lo, iv.lo), min(cur.hi, iv.hi)}
		open = true
	}
	if !flush() {
		return nil, false
	}
	return merge(out), true
}

// merge sorts ivs in place and joins the intervals that overlap or touch.
func merge(ivs []interval) []interval {
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].lo < ivs[j].lo })
	var out []interval
	for _, iv := range ivs {
		if n := len(out); n > 0 && iv.lo <= out[n-1].hi {
			out[n-1].hi = max(out[n-1].hi, iv.hi)
			continue
		}
		out = append(out, iv)
	}
	return out
}

// without removes the sorted positions ps from the sorted intervals ivs.
func without(ivs []interval, ps []int) []interval {
	var out []interval
	k := 0
	for _, iv := range ivs {
		lo := iv.lo
		for k < len(ps) && ps[k] < iv.lo {
			k++
		}
		for k < len(ps) && ps[k] < iv.hi {
			if ps[k] > lo {
				out = append(out, interval{lo, ps[k]})
			}
			lo = ps[k] + 1
			k++
		}
		if lo < iv.hi {
			out = append(out, interval{lo, iv.hi})
		}
	}
	return out
}

// union merges interval lists.
func union(lists ...[]interval) []interval {
	var all []interval
	for _, l := range lists {
		all = append(all, l...)
	}
	return merge(all)
}

func size(ivs []interval) int {
	n := 0
	for _, iv := range ivs {
		n += iv.hi - iv.lo
	}
	return n
}

// segTree numbers the nodes of a bottom-up segment tree over n positions:
// leaf of p is base+p, a node's parent is i/2.
type segTree struct{ base int }

func newSegTree(n int) segTree {
	b := 1
	for b < n {
		b *= 2
	}
	return segTree{base: b}
}

// nodes decomposes intervals into at most 2 log n tree nodes each.
func (t segTree) nodes(ivs []interval) []int {
	var out []int
	for _, iv := range ivs {
		l, r := iv.lo+t.base, iv.hi+t.base
		for l < r {
			if l&1 == 1 {
				out = append(out, l)
				l++
			}
			if r&1 == 1 {
				r--
				out = append(out, r)
			}
			l /= 2
			r /= 2
		}
	}
	return out
}
