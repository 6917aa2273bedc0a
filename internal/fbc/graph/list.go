package graph

import (
	"sort"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/index"
)

// The rows of upstream opm's `alpha list`, read from a catalog model (as
// upstream did, whatever the source); index.Write* prints them.

// ListPackages lists the packages of c by name: default channel, and the
// display name of the CSV at the head of the default channel.
func ListPackages(c *fbc.Catalog) []index.PackageRow {
	bundles := bundlesByName(c)
	var out []index.PackageRow
	seen := map[string]bool{}
	for _, p := range c.Packages {
		if seen[p.Name] {
			continue
		}
		seen[p.Name] = true
		r := index.PackageRow{Name: p.Name, DefaultChannel: p.DefaultChannel}
		for i := range c.Channels {
			ch := &c.Channels[i]
			if ch.Package != p.Name || ch.Name != p.DefaultChannel {
				continue
			}
			if h, err := Head(ch); err == nil && bundles[[2]string{p.Name, h}] != nil {
				r.DisplayName = CSVDisplayName(bundles[[2]string{p.Name, h}])
			}
			break
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// ListChannels lists the channels of pkg (every package when ""), by
// package and name, with their heads; a channel without one head shows the
// reason as upstream did ("ERROR: ...").
func ListChannels(c *fbc.Catalog, pkg string) ([]index.ChannelRow, error) {
	if err := checkPackage(c, pkg); err != nil {
		return nil, err
	}
	var out []index.ChannelRow
	for i := range c.Channels {
		ch := &c.Channels[i]
		if pkg != "" && ch.Package != pkg {
			continue
		}
		h, err := Head(ch)
		if err != nil {
			h = "ERROR: " + err.Error()
		}
		out = append(out, index.ChannelRow{Package: ch.Package, Channel: ch.Name, Head: h})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Channel < out[j].Channel
	})
	return out, nil
}

// ListBundles lists every bundle of every channel of pkg (every package
// when ""), one row per channel entry, by package, channel and bundle.
// Entries naming no bundle of the catalog have no row.
func ListBundles(c *fbc.Catalog, pkg string) ([]index.BundleRow, error) {
	if err := checkPackage(c, pkg); err != nil {
		return nil, err
	}
	bundles := bundlesByName(c)
	var out []index.BundleRow
	for _, ch := range c.Channels {
		if pkg != "" && ch.Package != pkg {
			continue
		}
		for _, e := range ch.Entries {
			b := bundles[[2]string{ch.Package, e.Name}]
			if b == nil {
				continue
			}
			r := index.BundleRow{Package: ch.Package, Channel: ch.Name, Bundle: e.Name, Replaces: e.Replaces,
				Skips: e.Skips, SkipRange: e.SkipRange, Image: b.Image}
			if v, err := Version(b); err == nil {
				r.Version = v.String()
			}
			out = append(out, r)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Package != b.Package {
			return a.Package < b.Package
		}
		if a.Channel != b.Channel {
			return a.Channel < b.Channel
		}
		return a.Bundle < b.Bundle
	})
	return out, nil
}

func checkPackage(c *fbc.Catalog, pkg string) error { return c.CheckPackage(pkg) }

// bundlesByName maps package and bundle name to the first such bundle.
func bundlesByName(c *fbc.Catalog) map[[2]string]*fbc.Bundle {
	out := make(map[[2]string]*fbc.Bundle, len(c.Bundles))
	for i := range c.Bundles {
		k := [2]string{c.Bundles[i].Package, c.Bundles[i].Name}
		if _, ok := out[k]; !ok {
			out[k] = &c.Bundles[i]
		}
	}
	return out
}
