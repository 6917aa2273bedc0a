package resolve

import (
	"sort"
	"sync/atomic"

	"github.com/blang/semver/v4"

	"github.com/opmkit/opm/internal/fbc"
)

// extPackageIndex is what a resolution reads of one package of one
// catalog, prepared once so that a resolution costs the package's size:
// the channel entries by bundle name, every skipRange parsed, every
// bundle's version read.
type extPackageIndex struct {
	// entries holds every entry of the view's channels by bundle name, in
	// channel order, then entry order.
	entries map[string][]extEntryRef
	// ranges holds every skipRange of the channels, parsed (nil when it
	// does not parse: operator-controller then ignores it).
	ranges map[string]semver.Range
	// info is every bundle's version as operator-controller reads it.
	info map[string]*extCandidate
	// ranked is every bundle in operator-controller's order of a
	// catalog's candidates (rankBefore, stable over the view's order):
	// filtering it keeps the order, so no resolution sorts.
	ranked []*extCandidate
	// listed is every bundle in the order PassedOver lists them: readable
	// versions first, highest first, then by name.
	listed []*extCandidate
	// visits counts the entries and bundles resolutions have looked at:
	// what the tests hold to the package's size per resolution.
	visits atomic.Int64
}

// extEntryRef is one channel entry of a bundle, with its channel.
type extEntryRef struct {
	ch *fbc.Channel
	e  *fbc.ChannelEntry
}

func newExtPackageIndex(pv *extPackageView) *extPackageIndex {
	idx := &extPackageIndex{entries: map[string][]extEntryRef{}, ranges: map[string]semver.Range{}, info: map[string]*extCandidate{}}
	for _, ch := range pv.channels {
		for i := range ch.Entries {
			e := &ch.Entries[i]
			idx.entries[e.Name] = append(idx.entries[e.Name], extEntryRef{ch: ch, e: e})
			if e.SkipRange == "" {
				continue
			}
			if _, ok := idx.ranges[e.SkipRange]; !ok {
				r, _ := semver.ParseRange(e.SkipRange)
				idx.ranges[e.SkipRange] = r
			}
		}
	}
	for _, b := range pv.bundles {
		cd := &extCandidate{bundle: b}
		cd.version, cd.vr, cd.vrErr = extBundleVersion(b)
		idx.info[b.Name] = cd
		idx.ranked = append(idx.ranked, cd)
	}
	sort.SliceStable(idx.ranked, func(i, j int) bool { return pv.rankBefore(idx.ranked[i], idx.ranked[j]) })
	idx.listed = append([]*extCandidate(nil), idx.ranked...)
	sort.SliceStable(idx.listed, func(i, j int) bool { return extListedBefore(idx.listed[i], idx.listed[j]) })
	return idx
}

func (idx *extPackageIndex) visit(n int64) {
	idx.visits.Add(n)
}

// extListedBefore is PassedOver's order: readable versions first, highest
// first, then by name (bundle names are unique in a view).
func extListedBefore(a, b *extCandidate) bool {
	if (a.vrErr == nil) != (b.vrErr == nil) {
		return a.vrErr == nil
	}
	if c := a.vr.compare(b.vr); c != 0 {
		return c > 0
	}
	return a.bundle.Name < b.bundle.Name
}
