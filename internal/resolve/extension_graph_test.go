package resolve

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/graph"
)

// TestUpgradePathOLMv1AgreesWithOperatorController replays every
// recorded OLM v1 upgrade question that upgrade-path --olmv1 can ask (one
// catalog, CatalogProvided, no version range, no selector, at most one
// channel: --channel) through its library (graph.Package.Path with
// ExtensionSteps), fixtures and reference catalogs alike, and compares
// the path's first step with operator-controller's answer: the bundle it
// moves to, the installed one when it stays, or its error word for word.
// It also checks that every later step, and where the path stays, is
// ResolveExtension's answer with the previous bundle installed. The
// questions it cannot ask are counted by why.
func TestUpgradePathOLMv1AgreesWithOperatorController(t *testing.T) {
	dir := filepath.Join("testdata", "olmv1")
	qs, as, sharedMissing := readOLMv1Recordings(t, dir)
	require.Len(t, as, len(qs))
	ctx := context.Background()
	catalogs := map[string]*fbc.Catalog{}
	pkgs := map[string]*graph.Package{}
	notAsked := map[string]int{}
	upgrades, equal, differ, skipped, laterSteps := 0, 0, 0, 0, 0
	for i, q := range qs {
		exts, err := ParseClusterExtension(q.ClusterExtension)
		require.NoError(t, err, q.Name)
		e := exts[0]
		if e.Installed == nil {
			continue
		}
		upgrades++
		switch {
		case len(q.Catalogs) != 1:
			notAsked["several catalogs (upgrade-path reads one)"]++
			continue
		case e.UpgradeConstraintPolicy == PolicySelfCertified:
			notAsked["SelfCertified (upgrade-path follows the catalog's edges)"]++
			continue
		case e.Version != "":
			notAsked["a version range (upgrade-path has none)"]++
			continue
		case e.Selector != nil:
			notAsked["a catalog selector"]++
			continue
		case len(e.Channels) > 1:
			notAsked["several channels (--channel names one)"]++
			continue
		}
		if sharedMissing != "" && extUsesShared(q) {
			skipped++
			continue
		}
		key := strings.Join(q.Catalogs[0].Sources, "\x00")
		if catalogs[key] == nil {
			catalogs[key] = loadExtSources(t, dir, q.Catalogs[0].Sources)
		}
		c := catalogs[key]
		cat := Catalog{Name: q.Catalogs[0].Name, Priority: q.Catalogs[0].Priority, Catalog: c}
		p := pkgs[key+"\x00"+e.PackageName]
		if p == nil {
			p, err = graph.NewPackage(c, e.PackageName)
			require.NoError(t, err, q.Name)
			pkgs[key+"\x00"+e.PackageName] = p
		}
		channel := ""
		if len(e.Channels) == 1 {
			channel = e.Channels[0]
		}
		// --from: the installed bundle's name when the catalog's version
		// of it is the one recorded, else the version recorded.
		from := e.Installed.Version
		for j := range c.Bundles {
			if b := &c.Bundles[j]; b.Package == e.PackageName && b.Name == e.Installed.Name && rawPackageVersion(b) == e.Installed.Version {
				from = b.Name
			}
		}
		steps := ExtensionSteps(ctx, cat, e.PackageName, e.Channels)
		var first *InstalledBundle
		pq := graph.PathQuery{From: from, Channel: channel, OLMv1: true, ResolveV1: func(inst graph.Bundle, version string) (graph.V1Pick, error) {
			if first == nil {
				first = &InstalledBundle{Name: inst.Name, Version: version}
			}
			return steps(inst, version)
		}}
		path, err := p.Path(pq)
		require.NoError(t, err, q.Name)
		require.NotNil(t, first, q.Name)
		if first.Name != e.Installed.Name && (first.Name != "" || extNamed(c, e.PackageName, e.Installed.Name)) {
			// --from a version names another bundle of it (or none, where
			// an entry names the installed one): another question.
			notAsked["an installed bundle --from cannot name (another bundle has its version)"]++
			continue
		}
		got := e.Installed.Name
		switch {
		case len(path.Steps) > 0:
			got = path.Steps[0].To
		case path.Error != "":
			got = path.Error
		}
		want := as[i].Error
		if as[i].Bundle != nil {
			want = *as[i].Bundle
		}
		if got != want {
			differ++
			t.Errorf("%s: upgrade-path --olmv1 --from %s answers %s, operator-controller %s (%s)", q.Name, from, got, want, path.Unreachable)
			continue
		}
		equal++
		// Every later step, and the end, is ResolveExtension's answer.
		for k, st := range path.Steps {
			if k == 0 {
				continue
			}
			laterSteps++
			require.Equal(t, st.To, extPick(t, cat, e, st.From), "%s: step %d", q.Name, k+1)
		}
		if len(path.Steps) > 0 && path.Error == "" && path.Unreachable == "" || strings.HasPrefix(path.Unreachable, "operator-controller stays") {
			require.Equal(t, path.End, extPick(t, cat, e, path.End), "%s: the end", q.Name)
		}
	}
	asked := equal + differ
	require.NotZero(t, asked)
	var why []string
	for w, n := range notAsked {
		why = append(why, fmt.Sprintf("%d %s", n, w))
	}
	sort.Strings(why)
	fmt.Printf("olmv1 upgrade-path: %d upgrade questions, %d asked, %d equal, %d differ, %d skipped, %d later steps checked; not askable: %s\n",
		upgrades, asked, equal, differ, skipped, laterSteps, strings.Join(why, ", "))
	if skipped > 0 {
		fmt.Printf("olmv1 upgrade-path: %d questions skipped: ../shared is not available (%s)\n", skipped, sharedMissing)
	}
}

// extPick is ResolveExtension's bundle for e with name installed (its
// catalog version), straight from the whole catalog.
func extPick(t *testing.T, cat Catalog, e ClusterExtension, name string) string {
	t.Helper()
	version := ""
	for j := range cat.Catalog.Bundles {
		if b := &cat.Catalog.Bundles[j]; b.Package == e.PackageName && b.Name == name {
			version = rawPackageVersion(b)
		}
	}
	e.Installed = &InstalledBundle{Name: name, Version: version}
	ans, err := ResolveExtension(context.Background(), []Catalog{cat}, e)
	require.NoError(t, err)
	if ans.Bundle == nil {
		return ans.Error
	}
	return *ans.Bundle
}

// extNamed says whether an entry of pkg replaces or skips name.
func extNamed(c *fbc.Catalog, pkg, name string) bool {
	for _, ch := range c.Channels {
		if ch.Package != pkg {
			continue
		}
		for _, e := range ch.Entries {
			if e.Replaces == name || extHasString(e.Skips, name) {
				return true
			}
		}
	}
	return false
}
