package draw

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/shareddata"
)

// Limits of one channel's picture (issue 37): it reads in a 1,280 px
// window without scrolling sideways.
const (
	maxPictureW = 1200.0
	maxPictureH = 2500.0
)

// channelOf reads entries into a DocChannel of package pkg; versions are
// taken from the names' "vX.Y.Z" suffix.
func channelOf(t testing.TB, pkg string, entries []fbc.ChannelEntry, deprecated ...string) graph.DocChannel {
	t.Helper()
	vers := map[string]semver.Version{}
	for _, e := range entries {
		v, err := semver.Parse(e.Name[strings.LastIndex(e.Name, ".v")+2:])
		if err != nil {
			t.Fatalf("entry %s: %v", e.Name, err)
		}
		vers[e.Name] = v
	}
	dep := map[string]bool{}
	for _, d := range deprecated {
		dep[d] = true
	}
	dc, warns := graph.NewDocChannel(&fbc.Channel{Name: "stable", Package: pkg, Entries: entries}, vers, dep)
	if len(warns) > 0 {
		t.Fatal(warns)
	}
	return dc
}

// chain: n bundles, each replacing the one before; skipRange gives entry i
// a range over what precedes it ("" for none).
func chain(t testing.TB, n int, skipRange func(i int) string) graph.DocChannel {
	var entries []fbc.ChannelEntry
	for i := range n {
		e := fbc.ChannelEntry{Name: fmt.Sprintf("chain.v2.4.%d", i+1)}
		if i > 0 {
			e.Replaces = fmt.Sprintf("chain.v2.4.%d", i)
		}
		if skipRange != nil {
			e.SkipRange = skipRange(i)
		}
		entries = append(entries, e)
	}
	return channelOf(t, "chain", entries)
}

// hostile is issue 40's channel: entry i replaces i-1 with skipRange
// "<i.0.0", so each range covers every bundle before it.
func hostile(t testing.TB, n int) graph.DocChannel {
	var entries []fbc.ChannelEntry
	for i := range n {
		e := fbc.ChannelEntry{Name: fmt.Sprintf("h.v%d.0.0", i), SkipRange: fmt.Sprintf("<%d.0.0", i)}
		if i > 0 {
			e.Replaces = fmt.Sprintf("h.v%d.0.0", i-1)
		}
		entries = append(entries, e)
	}
	return channelOf(t, "h", entries)
}

func boxOf(l *Layout, name string) *Box {
	for i := range l.Boxes {
		for _, m := range l.Boxes[i].Members {
			if m == name {
				return &l.Boxes[i]
			}
		}
	}
	return nil
}

// TestSkipFanIsOneGroupBeside: a head skipping ten bundles that lead
// nowhere else draws them as one box beside it, naming them all; with
// Expand, ten boxes in a row.
func TestSkipFanIsOneGroupBeside(t *testing.T) {
	for _, by := range []string{"skips", "skipRange"} {
		t.Run(by, func(t *testing.T) {
			// 2.3.0 <- 2.3.1 <- ... <- 2.3.9, all skipped by the head; the
			// head replaces 1.0.0 (skips) or 2.3.9 (skipRange).
			entries := []fbc.ChannelEntry{{Name: "fan.v1.0.0"}}
			head := fbc.ChannelEntry{Name: "fan.v3.0.0", Replaces: "fan.v1.0.0"}
			for i := range 10 {
				e := fbc.ChannelEntry{Name: fmt.Sprintf("fan.v2.3.%d", i)}
				if i > 0 {
					e.Replaces = fmt.Sprintf("fan.v2.3.%d", i-1)
				}
				entries = append(entries, e)
				if by == "skips" {
					head.Skips = append(head.Skips, e.Name)
				}
			}
			if by == "skipRange" {
				entries = entries[1:]
				head.Replaces, head.SkipRange = "fan.v2.3.9", ">=2.3.0 <2.4.0"
			}
			l := Lay(Channel{Doc: channelOf(t, "fan", append(entries, head))})
			g := boxOf(l, "fan.v2.3.0")
			if g == nil || g.Kind != KindGroup || len(g.Members) != 10 {
				t.Fatalf("skipped bundles not one group: %+v", g)
			}
			h := boxOf(l, "fan.v3.0.0")
			if g.Layer != h.Layer || g.X < h.X+h.W || g.Y+g.H < h.Y || g.Y > h.Y+h.H {
				t.Errorf("group (%.0f,%.0f) not beside its entry (%.0f,%.0f %.0fx%.0f)", g.X, g.Y, h.X, h.Y, h.W, h.H)
			}
			text := strings.Join(g.Lines, "\n")
			for _, want := range []string{"skipped by fan.v3.0.0:", "2.3.0 … 2.3.9, 10 bundles", "fan.v2.3.0,", "fan.v2.3.9"} {
				if !strings.Contains(text, want) {
					t.Errorf("group box lacks %q:\n%s", want, text)
				}
			}
			if b := boxOf(l, "fan.v1.0.0"); by == "skips" && b.Kind != KindBundle {
				t.Errorf("the replaced bundle is grouped: %+v", b)
			}
			if e := Lay(Channel{Doc: l0(t, entries, head), Expand: true}); len(e.Boxes) != len(entries)+1 {
				t.Errorf("expanded: %d boxes, %.0f px wide (grouped %.0f)", len(e.Boxes), e.Width, l.Width)
			}
		})
	}
}

func l0(t testing.TB, entries []fbc.ChannelEntry, head fbc.ChannelEntry) graph.DocChannel {
	return channelOf(t, "fan", append(append([]fbc.ChannelEntry(nil), entries...), head))
}

// TestChainOfSixtyFolds: a plain replaces chain folds between its head and
// its oldest bundle; a deprecated bundle in it stays its own box and splits
// the run; with Expand every bundle is a box again.
func TestChainOfSixtyFolds(t *testing.T) {
	dc := chain(t, 60, nil)
	l := Lay(Channel{Doc: dc})
	if len(l.Boxes) != 2 {
		t.Fatalf("%d boxes, want the head and one fold: %v", len(l.Boxes), names(l))
	}
	f := boxOf(l, "chain.v2.4.1")
	if f.Kind != KindFold || len(f.Members) != 59 || !strings.Contains(strings.Join(f.Lines, "\n"), "chain.v2.4.1 → … →\nchain.v2.4.59\n2.4.1 … 2.4.59, 59 bundles") {
		t.Errorf("fold: %+v", f)
	}
	if h := boxOf(l, "chain.v2.4.60"); h.Kind != KindBundle || !h.Head || h.Lines[1] != "2.4.60" {
		t.Errorf("head: %+v", h)
	}

	var entries []fbc.ChannelEntry
	for i := range 60 {
		e := fbc.ChannelEntry{Name: fmt.Sprintf("chain.v2.4.%d", i+1)}
		if i > 0 {
			e.Replaces = fmt.Sprintf("chain.v2.4.%d", i)
		}
		entries = append(entries, e)
	}
	l = Lay(Channel{Doc: channelOf(t, "chain", entries, "chain.v2.4.30")})
	if d := boxOf(l, "chain.v2.4.30"); d.Kind != KindBundle || !d.Deprecated {
		t.Errorf("deprecated bundle folded: %+v", d)
	}
	if len(l.Boxes) != 4 {
		t.Errorf("%d boxes, want head, two folds and the deprecated bundle: %v", len(l.Boxes), names(l))
	}
	if e := Lay(Channel{Doc: dc, Expand: true}); len(e.Boxes) != 60 {
		t.Errorf("expanded: %d boxes", len(e.Boxes))
	}
}

// TestSkipRangePatternsFold: a skipRange on every release over all before
// it folds like a plain chain (the head's bracket over the fold); a
// skipRange per minor version keeps the minors apart, each range's bracket
// over the minor below.
func TestSkipRangePatternsFold(t *testing.T) {
	l := Lay(Channel{Doc: chain(t, 60, func(i int) string { return fmt.Sprintf(">=2.4.1 <2.4.%d", i+1) })})
	if len(l.Boxes) != 2 || len(l.Spans) != 1 || l.Spans[0].Covered != 59 {
		t.Fatalf("cumulative ranges: %d boxes %v, %d spans", len(l.Boxes), names(l), len(l.Spans))
	}
	if !strings.Contains(strings.Join(boxOf(l, "chain.v2.4.2").Lines, "\n"), "58 with a skipRange") {
		t.Errorf("fold does not say its bundles carry skipRanges: %q", boxOf(l, "chain.v2.4.2").Lines)
	}

	var entries []fbc.ChannelEntry
	prev := ""
	for minor := 10; minor <= 13; minor++ {
		for patch := range 8 {
			e := fbc.ChannelEntry{Name: fmt.Sprintf("m.v4.%d.%d", minor, patch), Replaces: prev}
			if patch == 0 && minor > 10 {
				e.SkipRange = fmt.Sprintf(">=4.%d.0 <4.%d.0", minor-1, minor)
			}
			entries = append(entries, e)
			prev = e.Name
		}
	}
	l = Lay(Channel{Doc: channelOf(t, "m", entries)})
	// 4.10 leads only to 4.11.0, whose range covers it: a group.
	if b := boxOf(l, "m.v4.10.3"); b.Kind != KindGroup || len(b.Members) != 8 {
		t.Errorf("minor 4.10: %+v", b)
	}
	for minor := 11; minor <= 12; minor++ {
		b := boxOf(l, fmt.Sprintf("m.v4.%d.3", minor))
		if b.Kind != KindFold || len(b.Members) != 8 {
			t.Errorf("minor 4.%d: %+v", minor, b)
		}
	}
	if len(l.Spans) != 3 {
		t.Errorf("%d brackets, want one per minor's skipRange", len(l.Spans))
	}
	for _, s := range l.Spans {
		if s.Covered != 8 {
			t.Errorf("bracket of %s covers %d", l.Boxes[s.To].Name, s.Covered)
		}
	}
}

// TestHostileChannelIsSmall: issue 40's channel (here up to 2,000 bundles), each
// skipRange over all before it, is two boxes and a bracket, not two
// million edges.
func TestHostileChannelIsSmall(t *testing.T) {
	// From the graph package's document (an edge per covered bundle) and
	// from one edge per range.
	for _, dc := range []graph.DocChannel{hostile(t, 300), hostileRanges(300), hostileRanges(2000)} {
		n := len(dc.Bundles)
		l := Lay(Channel{Doc: dc})
		if len(l.Boxes) != 2 || len(l.Spans) != 1 || l.Spans[0].Covered != n-1 {
			t.Fatalf("%d bundles: %d boxes %v, %d spans", n, len(l.Boxes), names(l), len(l.Spans))
		}
		if l.Width > maxPictureW || l.Height > maxPictureH {
			t.Errorf("%d bundles: %.0f x %.0f", n, l.Width, l.Height)
		}
	}
}

// names lists the first boxes' names, for a failure message.
func names(l *Layout) []string {
	var out []string
	for i, b := range l.Boxes {
		if i == 8 {
			return append(out, fmt.Sprintf("… %d more", len(l.Boxes)-i))
		}
		out = append(out, b.Name)
	}
	return out
}

// TestCoverageAsBlang: the intervals a range is read into hold exactly the
// versions blang's Range admits.
func TestCoverageAsBlang(t *testing.T) {
	var vs []semver.Version
	for _, s := range []string{"0.9.0", "1.0.0-rc.1", "1.0.0", "1.0.0", "1.0.1", "1.1.0", "1.2.0-alpha", "1.2.0", "1.10.3", "2.0.0", "2.1.0+build.5", "3.0.0"} {
		vs = append(vs, semver.MustParse(s))
	}
	for _, r := range []string{"<1.2.0", ">=1.0.0 <1.2.0", "> 1.0.0 <= 2.0.0", "=1.0.0", "1.0.0", ">=2.0.0 || <1.0.0", ">=1.0.0 <1.1.0 || >=1.0.1 <2.0.0",
		"1.x", ">=1.x <2.x", "!=1.0.0", ">=1.0.0 !1.1.0", "<0.0.1", ">=4.0.0", "<1.2.0-alpha", ">1.0.0-rc.1 <1.0.0", ">=2.1.0 <2.1.1"} {
		rf, err := semver.ParseRange(r)
		if err != nil {
			t.Fatalf("%s: %v", r, err)
		}
		ivs, ok := coverage(r, vs)
		if !ok {
			t.Fatalf("%s: not read", r)
		}
		in := map[int]bool{}
		for _, iv := range ivs {
			for p := iv.lo; p < iv.hi; p++ {
				in[p] = true
			}
		}
		for p, v := range vs {
			if in[p] != rf(v) {
				t.Errorf("range %q, version %s: covered %v, blang %v", r, v, in[p], rf(v))
			}
		}
	}
	if _, ok := coverage("not a range", vs); ok {
		t.Error("a range that does not parse covers something")
	}
}

// referenceChannels are the pictures of the 22 reference catalogs.
func referenceChannels(t *testing.T) map[string][]Channel {
	dir := shareddata.Require(t, "reference", "index")
	files, err := filepath.Glob(filepath.Join(dir, "*.fbc.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no reference catalogs in %s: %v", dir, err)
	}
	out := map[string][]Channel{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := &fbc.Catalog{}
		if err := c.LoadFile(filepath.Base(f), raw); err != nil {
			t.Fatal(err)
		}
		doc, _, err := graph.NewDocument(c, graph.GraphOptions{})
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = Channels(doc)
	}
	return out
}

// TestPicturesWithinLimits: every channel of the reference catalogs, and
// the fixtures of issue 37 (a skip fan, a chain of 60, many branches)
// and issue 40 (the hostile channel), draws within 1,200 x 2,500 px, and
// sound (checkLayout).
func TestPicturesWithinLimits(t *testing.T) {
	all := referenceChannels(t)
	all["fixtures"] = []Channel{
		{Title: "chain of 60", Doc: chain(t, 60, nil)},
		{Title: "chain of 60 with skipRanges", Doc: chain(t, 60, func(i int) string { return fmt.Sprintf(">=2.4.1 <2.4.%d", i+1) })},
		{Title: "hostile 2000", Doc: hostileRanges(2000)},
		{Title: "branches", Doc: branches(t, 40)},
		{Title: "fan of 60", Doc: fan(t, 60)},
	}
	var wide, tall struct {
		where string
		px    float64
	}
	for where, chans := range all {
		for _, ch := range chans {
			checkLayout(t, ch)
			l := Lay(ch)
			if l.Width > maxPictureW || l.Height > maxPictureH {
				t.Errorf("%s %s: %.0f x %.0f px, over %.0f x %.0f", where, ch.Title, l.Width, l.Height, maxPictureW, maxPictureH)
			}
			if l.Width > wide.px {
				wide.where, wide.px = where+" "+ch.Title, l.Width
			}
			if l.Height > tall.px {
				tall.where, tall.px = where+" "+ch.Title, l.Height
			}
		}
	}
	t.Logf("widest: %s, %.0f px; tallest: %s, %.0f px", wide.where, wide.px, tall.where, tall.px)
}

// branches: a head and n z-stream branches off one root, each two deep.
func branches(t testing.TB, n int) graph.DocChannel {
	entries := []fbc.ChannelEntry{{Name: "br.v1.0.0"}}
	head := fbc.ChannelEntry{Name: "br.v9.0.0"}
	for i := range n {
		a := fbc.ChannelEntry{Name: fmt.Sprintf("br.v2.%d.0", i), Replaces: "br.v1.0.0"}
		b := fbc.ChannelEntry{Name: fmt.Sprintf("br.v2.%d.1", i), Replaces: a.Name}
		head.Skips = append(head.Skips, b.Name)
		entries = append(entries, a, b)
	}
	return channelOf(t, "br", append(entries, head))
}

// fan: a head skipping n bundles by name.
func fan(t testing.TB, n int) graph.DocChannel {
	var entries []fbc.ChannelEntry
	head := fbc.ChannelEntry{Name: "fan.v9.0.0"}
	for i := range n {
		e := fbc.ChannelEntry{Name: fmt.Sprintf("fan.v1.%d.0", i)}
		head.Skips = append(head.Skips, e.Name)
		entries = append(entries, e)
	}
	return channelOf(t, "fan", append(entries, head))
}

// oneEdgePerRange keeps, of a channel's skipRange edges, one per range
// with no source: all the drawing reads of them.
func oneEdgePerRange(dc graph.DocChannel) graph.DocChannel {
	var edges []graph.DocEdge
	seen := map[string]bool{}
	for _, e := range dc.Edges {
		if e.Kind == graph.EdgeSkipRange {
			if seen[e.To] {
				continue
			}
			seen[e.To] = true
			e.From = ""
		}
		edges = append(edges, e)
	}
	dc.Edges = edges
	return dc
}

// TestRangesReadFromVersions: the drawing reads each skipRange's coverage
// from the bundles' versions, not from an edge per covered bundle: a
// channel given one skipRange edge per range (how a linear graph document
// may give it) draws byte for byte as with every edge.
func TestRangesReadFromVersions(t *testing.T) {
	chans := append(Channels(demo(t)), Channel{Title: "big", Doc: synthetic(300)}, Channel{Title: "h", Doc: hostile(t, 50)})
	for where, cs := range referenceChannels(t) {
		for _, c := range cs {
			c.Title = where + " " + c.Title
			chans = append(chans, c)
		}
	}
	for _, ch := range chans {
		for _, expand := range []bool{false, true} {
			ch.Expand = expand
			var a, b strings.Builder
			InlineSVG(&a, ch, "x")
			ch.Doc = oneEdgePerRange(ch.Doc)
			InlineSVG(&b, ch, "x")
			if a.String() != b.String() {
				t.Errorf("%s (expand %v): drawn differently from one edge per range", ch.Title, expand)
			}
		}
	}
}

// TestHostileLayoutMemory: laying out issue 40's channel of 2,000 bundles
// allocates a few MB (it was 680 MB when every covered bundle was an
// edge); the bound is generous.
func TestHostileLayoutMemory(t *testing.T) {
	ch := Channel{Doc: hostileRanges(2000)}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	l := Lay(ch)
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("Lay allocated %d MB for 2,000 bundles, want under 64 MB", got>>20)
	}
	if len(l.Boxes) != 2 {
		t.Errorf("%d boxes", len(l.Boxes))
	}
}

// TestDiffMarksStayVisible: a bundle a diff marks (added or removed) is
// never folded or grouped away, and an edge it marks keeps its colour.
func TestDiffMarksStayVisible(t *testing.T) {
	dc := chain(t, 60, nil)
	ch := Channel{Doc: dc, Bundles: map[string]Mark{"chain.v2.4.30": Added},
		Edges: map[EdgeKey]Mark{{"chain.v2.4.29", "chain.v2.4.30", graph.EdgeReplaces}: Added}}
	l := Lay(ch)
	b := boxOf(l, "chain.v2.4.30")
	if b.Kind != KindBundle || b.Mark != Added {
		t.Fatalf("marked bundle: %+v", b)
	}
	marked := 0
	for _, k := range l.Links {
		if k.Mark == Added {
			marked++
			if l.Boxes[k.To].Name != "chain.v2.4.30" || l.Boxes[k.From].Kind != KindFold {
				t.Errorf("marked link %s -> %s", l.Boxes[k.From].Name, l.Boxes[k.To].Name)
			}
		}
	}
	if marked != 1 || len(l.Boxes) != 4 {
		t.Errorf("%d marked links, %d boxes %v", marked, len(l.Boxes), names(l))
	}
	if got := ChannelFacts(hostile(t, 100)); !strings.HasPrefix(got, "100 bundles, 99 replaces and skips edges, 99 skipRanges; head <code>h.v99.0.0</code>") {
		t.Errorf("facts: %s", got)
	}
}
