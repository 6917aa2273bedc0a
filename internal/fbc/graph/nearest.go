package graph

import (
	"fmt"
	"strings"

	"github.com/blang/semver/v4"
)

// HasVersion says whether a bundle of the package has version v.
func (p *Package) HasVersion(v semver.Version) bool {
	for _, bv := range p.Versions {
		if bv.EQ(v) {
			return true
		}
	}
	return false
}

// Nearest names the versions of the channels' entries either side of v,
// for a message about a version that is not there: "the nearest versions
// in channel stable are 1.0.0 (below) and 1.2.0 (above)".
func (p *Package) Nearest(channels []string, v semver.Version) string {
	var below, above *semver.Version
	for _, name := range channels {
		ch := p.Channel(name)
		if ch == nil {
			continue
		}
		for _, e := range ch.Entries {
			bv, ok := p.Versions[e.Name]
			if !ok {
				continue
			}
			if bv.LT(v) && (below == nil || bv.GT(*below)) {
				below = &bv
			}
			if bv.GT(v) && (above == nil || bv.LT(*above)) {
				above = &bv
			}
		}
	}
	where := "channel " + strings.Join(channels, ", ")
	if len(channels) > 1 {
		where = "channels " + strings.Join(channels, ", ")
	}
	switch {
	case below != nil && above != nil:
		return fmt.Sprintf("the nearest versions in %s are %s (below) and %s (above)", where, below, above)
	case below != nil:
		return fmt.Sprintf("the highest version in %s is %s", where, below)
	case above != nil:
		return fmt.Sprintf("the lowest version in %s is %s", where, above)
	}
	return "no bundle of " + where + " has a version"
}
