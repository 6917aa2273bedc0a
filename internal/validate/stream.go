package validate

import (
	"context"
	"runtime"
	"sort"
	"strconv"
	"sync"

	"github.com/opmkit/opm/internal/bundle"
)

// PackageReport is the reports of the bundles of one package, emitted by
// Stream once nothing left to load can belong to that package.
type PackageReport struct {
	// Package is the package name; "" for a bundle whose package could not
	// be told (it could not be read), which is reported on its own.
	Package string
	// Bundles are the reports, in the order their inputs were given; their
	// findings are sorted and include the package rules'.
	Bundles []BundleReport
	// Inputs holds the index in Stream's inputs of each of Bundles.
	Inputs []int
}

// DirInput is a bundle directory to validate, read as opts says, with the
// cheap package look-up that lets Stream finish its package early.
func DirInput(path string, opts bundle.LoadOptions) Input {
	return Input{
		Path:    path,
		Load:    func(context.Context) (*bundle.Bundle, error) { return bundle.LoadDirWith(path, opts) },
		Package: func(context.Context) string { return bundle.PeekPackageDir(path, opts) },
	}
}

// Stream validates inputs like Run, but hands each package's reports to emit
// as soon as that package is done, and keeps no bundle once its own checks
// are done: only the small summary the package rules compare (Member) and
// the reports of packages not yet emitted. Its memory is bounded by the
// bundles being loaded at once and the largest package, not by len(inputs).
//
// Grouping: before loading anything, Stream asks every input for its
// package (Input.Package, which reads only metadata/annotations.yaml of a
// directory). Inputs whose package is not known that way (images, bundles
// without a package annotation) are loaded first, since any package may
// turn out to hold them; then the others, package by package. A package is
// done when all its inputs and all the unknown ones are loaded. Packages
// are emitted in the order of their first input, so the output does not
// depend on timing. emit is called from Stream's own goroutine, one package
// at a time; Stream returns after the last.
//
// The findings are those of loading every bundle and running the package
// rules over all of them at once, provided the bundles do not change on disk
// during the run (a bundle whose package changed between the look-up and its
// loading, into a package already emitted, is reported on its own and is
// left out of that package's rules).
func Stream(ctx context.Context, inputs []Input, opts Options, emit func(PackageReport)) {
	n := opts.Concurrency
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	s := &streamer{opts: opts, emit: emit, groups: map[string]*group{}}
	hints := peekPackages(ctx, inputs, n)

	// The schedule: unknown packages first, then package by package in the
	// order each package first appears.
	var schedule []int
	var hinted []*group
	for i, h := range hints {
		if !h.known {
			schedule = append(schedule, i)
			s.unknown++
			continue
		}
		g := s.groups[h.pkg]
		if g == nil {
			g = s.newGroup(h.pkg, i)
			hinted = append(hinted, g)
		}
		g.inputs = append(g.inputs, i)
		g.pending++
	}
	for _, g := range hinted {
		schedule = append(schedule, g.inputs...)
		g.inputs = nil
	}

	todo := make(chan int)
	done := make(chan loaded)
	var wg sync.WaitGroup
	for range min(n, max(len(inputs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range todo {
				done <- load(ctx, i, inputs[i], opts)
			}
		}()
	}
	go func() {
		for _, i := range schedule {
			todo <- i
		}
		close(todo)
		wg.Wait()
		close(done)
	}()
	for r := range done {
		s.add(r, hints[r.index])
	}
	s.flush()
}

// hint is what Input.Package said before loading.
type hint struct {
	pkg   string
	known bool
}

// peekPackages asks every input for its package, n at a time.
func peekPackages(ctx context.Context, inputs []Input, n int) []hint {
	hints := make([]hint, len(inputs))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(n, max(len(inputs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				if inputs[i].Package == nil || ctx.Err() != nil {
					continue
				}
				if pkg := inputs[i].Package(ctx); pkg != "" {
					hints[i] = hint{pkg: pkg, known: true}
				}
			}
		}()
	}
	for i := range inputs {
		next <- i
	}
	close(next)
	wg.Wait()
	return hints
}

// loaded is one input after its own checks: its report, and what the
// package rules need of it (nil when it has no CSV).
type loaded struct {
	index  int
	report BundleReport
	member *Member
	// pkg is the bundle's package (bundle.Package); hasBundle is false when
	// nothing could be loaded at all.
	pkg       string
	hasBundle bool
}

func load(ctx context.Context, i int, in Input, opts Options) loaded {
	if err := ctx.Err(); err != nil {
		return loaded{index: i, report: BundleReport{Path: in.Path, Findings: []Finding{loadFinding(err)}}}
	}
	b, err := in.Load(ctx)
	r := loaded{index: i, report: Check(in.Path, b, err, opts)}
	if b != nil {
		r.pkg, r.hasBundle = b.Package(), true
		if b.CSV != nil {
			r.member = newMember(i, in.Path, b)
		}
	}
	// b is dropped here: from now on only the report and the member remain.
	return r
}

// group is one package being gathered.
type group struct {
	pkg     string
	first   int // the smallest input index in the group, for the output order
	pending int // inputs said to be of this package and not loaded yet
	inputs  []int
	loaded  []loaded
	members []*Member
	emitted bool
	// alone marks a group of one bundle that belongs to no package being
	// gathered: it takes no part in package rules.
	alone bool
}

type streamer struct {
	opts   Options
	emit   func(PackageReport)
	groups map[string]*group
	// unknown counts inputs of unknown package not loaded yet: until they
	// are, no package is done.
	unknown int
	// order is every group by first input, once the unknown inputs are
	// loaded; next is the first not emitted yet.
	order   []*group
	ordered bool
	next    int
	lone    int
}

func (s *streamer) newGroup(pkg string, first int) *group {
	g := &group{pkg: pkg, first: first}
	s.groups[pkg] = g
	if s.ordered {
		s.insert(g)
	}
	return g
}

// loneGroup is a group of its own for a bundle that joins no package.
func (s *streamer) loneGroup(pkg string, first int) *group {
	s.lone++
	g := &group{pkg: pkg, first: first, alone: true}
	// A key no package name can have.
	s.groups["\x00"+strconv.Itoa(s.lone)] = g
	if s.ordered {
		s.insert(g)
	}
	return g
}

// insert places a group created after the order was fixed: at its place
// among those not emitted yet.
func (s *streamer) insert(g *group) {
	at := s.next + sort.Search(len(s.order)-s.next, func(k int) bool { return s.order[s.next+k].first > g.first })
	s.order = append(s.order, nil)
	copy(s.order[at+1:], s.order[at:])
	s.order[at] = g
}

func (s *streamer) add(r loaded, h hint) {
	if h.known {
		s.groups[h.pkg].pending--
	} else {
		s.unknown--
	}
	var g *group
	switch {
	case r.member != nil || (r.hasBundle && r.pkg != ""):
		// The bundle's own package, as the package rules group it.
		g = s.groups[r.pkg]
		if g == nil {
			g = s.newGroup(r.pkg, r.index)
		}
	case h.known:
		// Nothing readable names a package: report it with the package
		// its annotations named.
		g = s.groups[h.pkg]
	}
	if g == nil || g.emitted {
		g = s.loneGroup(r.pkg, r.index)
	}
	g.first = min(g.first, r.index)
	if r.member != nil && !g.alone {
		g.members = append(g.members, r.member)
		r.member = nil
	}
	g.loaded = append(g.loaded, r)
	if s.unknown == 0 {
		s.flush()
	}
}

// flush emits, in order, every group that is done.
func (s *streamer) flush() {
	if s.unknown > 0 {
		return
	}
	if !s.ordered {
		for _, g := range s.groups {
			s.order = append(s.order, g)
		}
		sort.Slice(s.order, func(i, j int) bool { return s.order[i].first < s.order[j].first })
		s.ordered = true
	}
	for s.next < len(s.order) && s.order[s.next].pending == 0 {
		g := s.order[s.next]
		s.order[s.next] = nil
		s.next++
		s.finish(g)
	}
}

// finish runs the package rules over a done group and emits it.
func (s *streamer) finish(g *group) {
	g.emitted = true
	sort.Slice(g.loaded, func(i, j int) bool { return g.loaded[i].index < g.loaded[j].index })
	sort.Slice(g.members, func(i, j int) bool { return g.members[i].index < g.members[j].index })
	rep := PackageReport{Package: g.pkg, Bundles: make([]BundleReport, len(g.loaded)), Inputs: make([]int, len(g.loaded))}
	byIndex := make(map[int]*BundleReport, len(g.loaded))
	for k := range g.loaded {
		rep.Bundles[k], rep.Inputs[k] = g.loaded[k].report, g.loaded[k].index
		byIndex[g.loaded[k].index] = &rep.Bundles[k]
	}
	byMember := make(map[*Member]*BundleReport, len(g.members))
	for _, m := range g.members {
		byMember[m] = byIndex[m.index]
	}
	checkPackage(g.pkg, g.members, byMember, s.opts)
	for k := range rep.Bundles {
		sortFindings(rep.Bundles[k].Findings)
	}
	// Only the emitted mark stays: a late bundle of this package (see
	// Stream) must not join it.
	g.loaded, g.members = nil, nil
	s.emit(rep)
}
