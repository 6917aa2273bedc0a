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
	// ResolveExtension reads nothing of a catalog but the package's blobs:
	// keeping only those makes a step cost the package, not the catalog.
	c := &fbc.Catalog{}
	versions := map[string]string{}
	if catalog.Catalog != nil {
		for _, p := range catalog.Catalog.Packages {
			if p.Name == pkg {
				c.Packages = append(c.Packages, p)
			}
		}
		for _, ch := range catalog.Catalog.Channels {
			if ch.Package == pkg {
				c.Channels = append(c.Channels, ch)
			}
		}
		for i, b := range catalog.Catalog.Bundles {
			if b.Package != pkg {
				continue
			}
			c.Bundles = append(c.Bundles, b)
			// The later of two bundles of one name wins, as in
			// operator-controller's catalog cache.
			versions[b.Name] = rawPackageVersion(&catalog.Catalog.Bundles[i])
		}
		for _, m := range catalog.Catalog.Others {
			if m.Package == pkg {
				c.Others = append(c.Others, m)
			}
		}
	}
	cats := []Catalog{{Name: catalog.Name, Priority: catalog.Priority, Catalog: c}}
	return func(installed graph.Bundle, version string) (graph.V1Pick, error) {
		inst := InstalledBundle{Name: installed.Name, Version: version}
		if inst.Version == "" {
			if v, ok := versions[installed.Name]; ok {
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
		ans, err := ResolveExtension(ctx, cats, ClusterExtension{PackageName: pkg, Channels: channels, Installed: &inst})
		if err != nil {
			return graph.V1Pick{}, err
		}
		if ans.Bundle == nil {
			return graph.V1Pick{Error: ans.Error, Why: strings.Join(ans.Reasons, "; ")}, nil
		}
		pick := graph.V1Pick{Bundle: *ans.Bundle}
		if pick.Bundle == inst.Name {
			pick.Why = extStayWhy(ans, inst, channels)
		}
		return pick, nil
	}
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
