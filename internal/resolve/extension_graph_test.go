package resolve

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/shareddata"
)

// TestUpgradePathOLMv1AgreesWithOperatorController checks the upgrade
// graph's OLM v1 step (graph.Package.NextV1, what upgrade-path --olmv1
// walks) against operator-controller's recorded answers to the upgrades
// from every bundle of the reference catalogs (CatalogProvided, no
// range, every channel or one): the bundle it moves to, or none when it
// stays. The fixtures' upgrades are left out: there the step and the
// resolver part on purpose-built edge cases (a deprecated successor, a
// successor below the installed version, a channel without the
// installed bundle), which ResolveExtension answers.
func TestUpgradePathOLMv1AgreesWithOperatorController(t *testing.T) {
	dir := filepath.Join("testdata", "olmv1")
	shareddata.Require(t, "reference", "index")
	var qs []olmv1Question
	var as []olmv1Answer
	for f, v := range map[string]any{"questions.json": &qs, "answers.json": &as} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, v), f)
	}
	refused := regexp.MustCompile(`^validating bundle "([^"]+)"`)
	pkgs := map[string]*graph.Package{}
	asked := 0
	for i, q := range qs {
		if len(q.Catalogs) != 1 || !extUsesShared(q) {
			continue
		}
		exts, err := ParseClusterExtension(q.ClusterExtension)
		require.NoError(t, err)
		e := exts[0]
		if e.Installed == nil || e.Version != "" || e.UpgradeConstraintPolicy == PolicySelfCertified {
			continue
		}
		key := fmt.Sprint(q.Catalogs[0].Sources)
		p := pkgs[key]
		if p == nil {
			p, err = graph.NewPackage(loadExtSources(t, dir, q.Catalogs[0].Sources), e.PackageName)
			require.NoError(t, err)
			pkgs[key] = p
		}
		var chans []*graph.ChannelGraph
		for _, ch := range e.Channels {
			g := p.Channel(ch)
			require.NotNil(t, g, q.Name)
			chans = append(chans, g)
		}
		from := graph.Bundle{Name: e.Installed.Name}
		from.Version, from.HasVersion = p.Versions[e.Installed.Name]
		want := as[i].Error
		if as[i].Bundle != nil {
			want = *as[i].Bundle
		} else if m := refused.FindStringSubmatch(as[i].Error); m != nil {
			want = m[1] // resolved, then refused: still the step
		}
		got := e.Installed.Name
		if st, ok := p.NextV1(from, chans); ok {
			got = st.To
		}
		asked++
		if got != want {
			t.Errorf("%s: upgrade-path --olmv1 steps to %s, operator-controller resolves %s", q.Name, got, want)
		}
	}
	require.NotZero(t, asked)
	t.Logf("%d upgrades asked", asked)
}
