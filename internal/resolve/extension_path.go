package resolve

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// ExtensionSteps is operator-controller's resolver as an OLM v1 upgrade
// path walks it (graph.PathQuery.ResolveV1): each call is ResolveExtension
// for a ClusterExtension of package pkg with the channels given (every
// channel when none), no version range and CatalogProvided, the bundle
// given installed, against the one catalog. So upgrade-path --olmv1 steps,
// stays and fails exactly where ResolveExtension does.
func ExtensionSteps(ctx context.Context, catalog Catalog, pkg string, channels []string) graph.V1Resolver {
	return newExtSteps(ctx, catalog, pkg, channels).step
}

// extSteps is ExtensionSteps' state: the package prepared once for every
// step of a walk (its view and index, every bundle's recorded version),
// so that a step costs the package's size and no copy of it.
type extSteps struct {
	ctx      context.Context
	cats     []Catalog
	opts     extOptions
	pkg      string
	channels []string
	versions map[string]string
}

func newExtSteps(ctx context.Context, catalog Catalog, pkg string, channels []string) *extSteps {
	s := &extSteps{ctx: ctx, pkg: pkg, channels: channels, versions: map[string]string{},
		cats: []Catalog{catalog}, opts: extOptions{pathOnly: true}}
	s.opts.views = []*extPackageView{newExtPackageView(catalog, pkg)}
	if catalog.Catalog != nil {
		for i, b := range catalog.Catalog.Bundles {
			if b.Package == pkg {
				// The later of two bundles of one name wins, as in
				// operator-controller's catalog cache.
				s.versions[b.Name] = rawPackageVersion(&catalog.Catalog.Bundles[i])
			}
		}
	}
	return s
}

// visits is how many entries and bundles the steps so far looked at.
func (s *extSteps) visits() int64 {
	return s.opts.views[0].idx.visits.Load()
}

func (s *extSteps) step(installed graph.Bundle, version string) (graph.V1Pick, error) {
	inst := InstalledBundle{Name: installed.Name, Version: version}
	if inst.Version == "" {
		if v, ok := s.versions[installed.Name]; ok {
			inst.Version = v
		} else if installed.HasVersion {
			inst.Version = installed.Version.String()
		}
	}
	if inst.Name == "" {
		// A version no bundle has: only a skipRange leads on from it.
		// An empty name would match every entry that replaces nothing.
		inst.Name = fmt.Sprintf("(a bundle of version %s)", inst.Version)
	}
	ans, err := resolveExtension(s.ctx, s.cats, ClusterExtension{PackageName: s.pkg, Channels: s.channels, Installed: &inst}, s.opts)
	if err != nil {
		return graph.V1Pick{}, err
	}
	if ans.Bundle == nil {
		return graph.V1Pick{Error: ans.Error, Why: strings.Join(ans.Reasons, "; ")}, nil
	}
	pick := graph.V1Pick{Bundle: *ans.Bundle}
	if pick.Bundle == inst.Name {
		pick.Why = extStayWhy(ans, inst, s.channels)
	}
	return pick, nil
}

// rawPackageVersion is the version a bundle's first olm.package property
// gives, as written ("" when there is none): what operator-controller
// records as the installed version.
func rawPackageVersion(b *fbc.Bundle) string {
	for _, p := range b.Properties {
		if p.Type != fbc.PropertyPackage {
			continue
		}
		var v struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(p.Value, &v) != nil {
			return ""
		}
		return v.Version
	}
	return ""
}

// extStayWhy says why operator-controller keeps the installed bundle:
// the successors it passed over, or that there is none.
func extStayWhy(ans ExtensionAnswer, inst InstalledBundle, channels []string) string {
	var why []string
	for _, po := range ans.PassedOver {
		if po.Bundle == inst.Name {
			continue
		}
		switch po.Rule {
		case PassedDeprecated:
			why = append(why, fmt.Sprintf("%s (%s) upgrades from it but is deprecated, and operator-controller ranks the installed bundle, which is not, first", po.Bundle, po.Version))
		case PassedLowerVersion:
			if _, err := extLegacyVersionRelease(po.Version); err != nil {
				why = append(why, fmt.Sprintf("%s upgrades from it but its version %q does not read as semver, so operator-controller ranks it last", po.Bundle, po.Version))
				continue
			}
			why = append(why, fmt.Sprintf("%s (%s) upgrades from it but is not above it (operator-controller keeps the higher version)", po.Bundle, po.Version))
		}
	}
	if len(why) > 0 {
		return strings.Join(why, "; ")
	}
	where := "any channel"
	if len(channels) > 0 {
		where = "channel " + strings.Join(channels, ", ")
	}
	return fmt.Sprintf("no entry of %s replaces or skips it or has a skipRange covering its version %s", where, inst.Version)
}
