package resolve

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// A ClusterExtension's spec.source.catalog.version is a range in the
// syntax of the Masterminds semver library, which operator-controller
// parses it with: groups joined by "||", each a list of comparisons
// separated by spaces or commas, with "A - B" spans, x/X/* wildcards and
// the ~ and ^ shorthands. This file reads that syntax (opm's own parser)
// and answers as that library does, quirks included: a version with a
// pre-release matches only a group that names a pre-release, and a
// wildcard or missing part turns = into ~.

// Limits the library sets on a range.
const (
	extMaxRangeLen    = 512
	extMaxRangeGroups = 32
	extMaxBoundLen    = 256
)

// extRange is a parsed range: it holds when one group holds.
type extRange struct {
	groups []extRangeGroup
}

// extRangeGroup holds when every comparison does; pre says whether one of
// them names a pre-release (only then may a pre-release version match).
type extRangeGroup struct {
	cmps []extComparison
	pre  bool
}

// extComparison is one operator and its bound. Parts left out or written as
// a wildcard are 0 in bound and marked: anyMinor (the minor and patch)
// or anyPatch; wild says any part was.
type extComparison struct {
	op       string
	text     string // the bound as written, for messages
	bound    extRangeVersion
	wild     bool
	anyMinor bool
	anyPatch bool
}

// extRangeVersion is a version as the range library compares them:
// pre-release identifiers as a dot-separated string, build ignored.
type extRangeVersion struct {
	major, minor, patch uint64
	pre                 string
}

func rangeFromSemver(v semver.Version) extRangeVersion {
	parts := make([]string, len(v.Pre))
	for i, p := range v.Pre {
		parts[i] = p.String()
	}
	return extRangeVersion{major: v.Major, minor: v.Minor, patch: v.Patch, pre: strings.Join(parts, ".")}
}

func (v extRangeVersion) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch)
	if v.pre != "" {
		s += "-" + v.pre
	}
	return s
}

func rangeCmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// compare orders versions; a pre-release is below its release.
func (v extRangeVersion) compare(o extRangeVersion) int {
	if c := rangeCmpUint(v.major, o.major); c != 0 {
		return c
	}
	if c := rangeCmpUint(v.minor, o.minor); c != 0 {
		return c
	}
	if c := rangeCmpUint(v.patch, o.patch); c != 0 {
		return c
	}
	switch {
	case v.pre == o.pre:
		return 0
	case v.pre == "":
		return 1
	case o.pre == "":
		return -1
	}
	a, b := strings.Split(v.pre, "."), strings.Split(o.pre, ".")
	for i := 0; i < len(a) || i < len(b); i++ {
		var x, y string
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if c := rangeComparePreIdent(x, y); c != 0 {
			return c
		}
	}
	return 0
}

// rangeComparePreIdent orders two pre-release identifiers: a missing one
// first, numbers (that fit 64 bits) before words, numbers by value,
// words by bytes.
func rangeComparePreIdent(x, y string) int {
	if x == y {
		return 0
	}
	if x == "" {
		return -1
	}
	if y == "" {
		return 1
	}
	xn, xerr := strconv.ParseUint(x, 10, 64)
	yn, yerr := strconv.ParseUint(y, 10, 64)
	switch {
	case xerr == nil && yerr == nil:
		return rangeCmpUint(xn, yn)
	case xerr == nil:
		return -1
	case yerr == nil:
		return 1
	case x > y:
		return 1
	}
	return -1
}

// errExtRangeBound is what the library says of a bound it cannot read as a
// version (a part that is neither a number nor a wildcard, a pre-release
// number with a leading zero).
var errExtRangeBound = errors.New("constraint parser error")

// parseExtRange reads a range. Its errors are the library's.
func parseExtRange(s string) (*extRange, error) {
	if len(s) > extMaxRangeLen {
		return nil, fmt.Errorf("constraint string is too long (max %d bytes)", extMaxRangeLen)
	}
	s = rangeExpandSpans(s)
	texts := strings.Split(s, "||")
	if len(texts) > extMaxRangeGroups {
		return nil, fmt.Errorf("too many constraint groups (max %d)", extMaxRangeGroups)
	}
	r := &extRange{}
	for _, t := range texts {
		raw, ok := rangeScanGroup(t)
		if !ok {
			return nil, fmt.Errorf("improper constraint: %q", t)
		}
		g := extRangeGroup{}
		for _, rc := range raw {
			c, err := rc.comparison()
			if err != nil {
				return nil, err
			}
			if c.bound.pre != "" {
				g.pre = true
			}
			g.cmps = append(g.cmps, c)
		}
		r.groups = append(r.groups, g)
	}
	return r, nil
}

// contains says whether v is in the range.
func (r *extRange) contains(v extRangeVersion) bool {
	for _, g := range r.groups {
		if v.pre != "" && !g.pre {
			continue
		}
		all := true
		for _, c := range g.cmps {
			if !c.holds(v) {
				all = false
				break
			}
		}
		if all {
			return true
		}
	}
	return false
}

// extRawComparison is a comparison as scanned: its operator and the parts of
// its bound as written.
type extRawComparison struct {
	op                  string
	text                string // v?MAJOR(.MINOR)?(.PATCH)?(-PRE)?(+BUILD)?
	major, minor, patch string // minor and patch with their dot, or ""
	pre                 string // with its dash, or ""
}

func rangeWild(s string) bool { return s == "x" || s == "X" || s == "*" }

// extComparison turns the scanned bound into a version the way the library
// does: from the first wildcard or missing part on, the parts are 0 (and
// whatever follows is not read); the build is kept only on a full bound.
func (rc extRawComparison) comparison() (extComparison, error) {
	c := extComparison{op: rc.op, text: rc.text}
	var ver string
	switch {
	case rangeWild(rc.major):
		ver = "0.0.0" + rc.pre
		c.wild = true
	case rc.minor == "" || rangeWild(rc.minor[1:]):
		ver = rc.major + ".0.0" + rc.pre
		c.wild, c.anyMinor = true, true
	case rc.patch == "" || rangeWild(rc.patch[1:]):
		ver = rc.major + rc.minor + ".0" + rc.pre
		c.wild, c.anyPatch = true, true
	default:
		ver = rc.text
	}
	v, ok := rangeLooseVersion(ver)
	if !ok {
		return c, errExtRangeBound
	}
	c.bound = v
	return c, nil
}

// rangeLooseVersion reads v?N(.N)?(.N)?(-PRE)?(+BUILD)? with numbers that may
// have leading zeros and must fit 64 bits, and pre-release numbers that
// must not; the build is dropped.
func rangeLooseVersion(s string) (extRangeVersion, bool) {
	var v extRangeVersion
	if len(s) > extMaxBoundLen {
		return v, false
	}
	s = strings.TrimPrefix(s, "v")
	if i := strings.IndexByte(s, '+'); i >= 0 {
		build := s[i+1:]
		s = s[:i]
		for _, id := range strings.Split(build, ".") {
			if id == "" || !rangeIdentChars(id) {
				return v, false
			}
		}
	}
	if i := strings.IndexByte(s, '-'); i >= 0 {
		v.pre = s[i+1:]
		s = s[:i]
		for _, id := range strings.Split(v.pre, ".") {
			if id == "" || !rangeIdentChars(id) {
				return v, false
			}
			if rangeAllDigits(id) && len(id) > 1 && id[0] == '0' {
				return v, false
			}
		}
	}
	nums := strings.Split(s, ".")
	if len(nums) > 3 {
		return v, false
	}
	dst := []*uint64{&v.major, &v.minor, &v.patch}
	for i, n := range nums {
		if n == "" || !rangeAllDigits(n) {
			return v, false
		}
		x, err := strconv.ParseUint(n, 10, 64)
		if err != nil {
			return v, false
		}
		*dst[i] = x
	}
	return v, true
}

func rangeAllDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func rangeIdentChar(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '-'
}

func rangeIdentChars(s string) bool {
	for i := 0; i < len(s); i++ {
		if !rangeIdentChar(s[i]) {
			return false
		}
	}
	return true
}

// rangePartChar is what a numeric part of a bound may be written with before
// it is read: digits, wildcards and, as the library's pattern has it, '|'.
func rangePartChar(b byte) bool {
	return b >= '0' && b <= '9' || b == 'x' || b == 'X' || b == '*' || b == '|'
}

// rangeSpace is the pattern's \s.
func rangeSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\f' || b == '\r'
}

// rangeScanBound reads a bound at s[i:]: v?PART(.PART)?(.PART)?(-IDS)?(+IDS)?.
// It returns the end, or -1 when none starts there.
func rangeScanBound(s string, i int) (extRawComparison, int) {
	var rc extRawComparison
	start := i
	if i < len(s) && s[i] == 'v' {
		i++
	}
	part := func(i int) int {
		j := i
		for j < len(s) && rangePartChar(s[j]) {
			j++
		}
		return j
	}
	j := part(i)
	if j == i {
		return rc, -1
	}
	rc.major = s[i:j]
	i = j
	for _, dst := range []*string{&rc.minor, &rc.patch} {
		if i < len(s) && s[i] == '.' {
			if j := part(i + 1); j > i+1 {
				*dst = s[i:j]
				i = j
				continue
			}
		}
		break
	}
	idents := func(i int) int {
		// IDENT(.IDENT)*, at least one; returns i when none.
		end := i
		for {
			j := i
			for j < len(s) && rangeIdentChar(s[j]) {
				j++
			}
			if j == i {
				return end
			}
			end = j
			if j < len(s) && s[j] == '.' {
				i = j + 1
				continue
			}
			return end
		}
	}
	if i < len(s) && s[i] == '-' {
		if j := idents(i + 1); j > i+1 {
			rc.pre = s[i:j]
			i = j
		}
	}
	if i < len(s) && s[i] == '+' {
		if j := idents(i + 1); j > i+1 {
			i = j
		}
	}
	rc.text = s[start:i]
	return rc, i
}

// rangeScanOp reads an operator at s[i:] (possibly none).
func rangeScanOp(s string, i int) (string, int) {
	if i+1 < len(s) {
		switch two := s[i : i+2]; two {
		case ">=", "=>", "<=", "=<", "!=", "~>":
			return two, i + 2
		}
	}
	if i < len(s) {
		switch one := s[i : i+1]; one {
		case "=", ">", "<", "~", "^":
			return one, i + 1
		}
	}
	return "", i
}

// rangeScanGroup reads one group: comparisons separated by spaces or by a
// comma (spaces around it allowed). ok is false when the text is not
// that.
func rangeScanGroup(s string) (out []extRawComparison, ok bool) {
	skip := func(i int) int {
		for i < len(s) && rangeSpace(s[i]) {
			i++
		}
		return i
	}
	i := skip(0)
	for {
		op, j := rangeScanOp(s, i)
		j = skip(j)
		rc, end := rangeScanBound(s, j)
		if end < 0 {
			return nil, false
		}
		rc.op = op
		out = append(out, rc)
		i = end
		k := skip(i)
		if k == len(s) {
			return out, true
		}
		switch {
		case s[k] == ',':
			i = skip(k + 1)
		case k > i:
			i = k
		default:
			return nil, false
		}
	}
}

// rangeExpandSpans rewrites each "A - B" (spaces around the dash required) as
// ">= A, <= B ", as the library does before it splits the groups: a span
// is looked for in the whole text, "||" and all, from the left, and may
// start inside a word; the spaces around it go with it.
func rangeExpandSpans(s string) string {
	var b strings.Builder
	last := 0
	for p := 0; p < len(s); {
		if lo, hi, end, ok := rangeSpanAt(s, p); ok {
			b.WriteString(s[last:p])
			fmt.Fprintf(&b, ">= %s, <= %s ", s[lo[0]:lo[1]], s[hi:end[0]])
			p, last = end[1], end[1]
			continue
		}
		p++
	}
	b.WriteString(s[last:])
	return b.String()
}

// rangeSpanAt matches spaces, a bound, spaces, "-", spaces, a bound, spaces at
// s[p:]: lo is the first bound, hi..end[0] the second, end[1] the end.
func rangeSpanAt(s string, p int) (lo [2]int, hi int, end [2]int, ok bool) {
	skip := func(i int) int {
		for i < len(s) && rangeSpace(s[i]) {
			i++
		}
		return i
	}
	q := skip(p)
	_, e1 := rangeScanBound(s, q)
	if e1 < 0 {
		return lo, 0, end, false
	}
	d := skip(e1)
	if d == e1 || d >= len(s) || s[d] != '-' {
		return lo, 0, end, false
	}
	h := skip(d + 1)
	if h == d+1 {
		return lo, 0, end, false
	}
	_, e2 := rangeScanBound(s, h)
	if e2 < 0 {
		return lo, 0, end, false
	}
	return [2]int{q, e1}, h, [2]int{e2, skip(e2)}, true
}

// holds says whether v satisfies the comparison (the group has already
// ruled out a pre-release v it does not allow).
func (c extComparison) holds(v extRangeVersion) bool {
	b := c.bound
	switch c.op {
	case "", "=":
		if c.wild {
			return c.tilde(v)
		}
		return v.compare(b) == 0
	case "!=":
		if c.wild {
			if v.major != b.major {
				return true
			}
			if c.anyMinor {
				return false
			}
			if v.minor != b.minor {
				return true
			}
			if c.anyPatch {
				return v.pre != b.pre
			}
		}
		return v.compare(b) != 0
	case ">":
		if !c.wild {
			return v.compare(b) > 0
		}
		switch {
		case v.major > b.major:
			return true
		case v.major < b.major, c.anyMinor:
			return false
		case c.anyPatch:
			return v.minor > b.minor
		}
		return v.compare(b) > 0
	case "<":
		return v.compare(b) < 0
	case ">=", "=>":
		return v.compare(b) >= 0
	case "<=", "=<":
		if !c.wild {
			return v.compare(b) <= 0
		}
		if v.major > b.major {
			return false
		}
		return v.major != b.major || v.minor <= b.minor || c.anyMinor
	case "~", "~>":
		return c.tilde(v)
	case "^":
		if v.compare(b) < 0 {
			return false
		}
		if b.major > 0 || c.anyMinor {
			return v.major == b.major
		}
		if v.major > 0 {
			return false
		}
		if b.minor > 0 || c.anyPatch {
			return v.minor == b.minor
		}
		if v.minor > 0 {
			return false
		}
		return v.patch == b.patch
	}
	return false
}

// tilde: at least the bound, within its major (and its minor, unless
// the minor was left open); ~0.0.0 written in full admits everything.
func (c extComparison) tilde(v extRangeVersion) bool {
	b := c.bound
	if v.compare(b) < 0 {
		return false
	}
	if b.major == 0 && b.minor == 0 && b.patch == 0 && !c.anyMinor && !c.anyPatch {
		return true
	}
	if v.major != b.major {
		return false
	}
	return v.minor == b.minor || c.anyMinor
}
