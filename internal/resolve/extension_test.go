package resolve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
)

const extensionYAML = `apiVersion: olm.operatorframework.io/v1
kind: ClusterExtension
metadata:
  name: argocd
spec:
  namespace: argocd
  serviceAccount:
    name: argocd-installer
  source:
    sourceType: Catalog
    catalog:
      packageName: argocd-operator
      version: ">=0.6.0 <0.9.0"
      channels: [alpha, beta]
      upgradeConstraintPolicy: SelfCertified
      selector:
        matchLabels:
          olm.operatorframework.io/metadata.name: operatorhubio
status:
  install:
    bundle:
      name: argocd-operator.v0.6.0
      version: 0.6.0
`

func TestParseClusterExtensionReadsTheFieldsResolutionUses(t *testing.T) {
	exts, err := ParseClusterExtension([]byte(extensionYAML))
	require.NoError(t, err)
	require.Len(t, exts, 1)
	e := exts[0]
	assert.Equal(t, "argocd", e.Name)
	assert.Equal(t, "argocd-operator", e.PackageName)
	assert.Equal(t, ">=0.6.0 <0.9.0", e.Version)
	assert.Equal(t, []string{"alpha", "beta"}, e.Channels)
	assert.Equal(t, PolicySelfCertified, e.UpgradeConstraintPolicy)
	require.NotNil(t, e.Selector)
	assert.Equal(t, map[string]string{CatalogNameLabel: "operatorhubio"}, e.Selector.MatchLabels)
	require.NotNil(t, e.Installed)
	assert.Equal(t, InstalledBundle{Name: "argocd-operator.v0.6.0", Version: "0.6.0"}, *e.Installed)
}

func TestParseClusterExtensionForms(t *testing.T) {
	json1 := `{"apiVersion":"olm.operatorframework.io/v1","kind":"ClusterExtension","metadata":{"name":"a"},"spec":{"source":{"sourceType":"Catalog","catalog":{"packageName":"a"}}}}`
	list := `{"apiVersion":"v1","kind":"List","items":[` + json1 + `,` + strings.Replace(json1, `"packageName":"a"`, `"packageName":"b"`, 1) + `]}`
	typedList := strings.Replace(list, `"kind":"List"`, `"kind":"ClusterExtensionList"`, 1)
	multi := extensionYAML + "---\n" + strings.Replace(extensionYAML, "packageName: argocd-operator", "packageName: other", 1)
	for name, tc := range map[string]struct {
		in   string
		pkgs []string
	}{
		"json":       {json1, []string{"a"}},
		"list":       {list, []string{"a", "b"}},
		"typed list": {typedList, []string{"a", "b"}},
		"documents":  {multi, []string{"argocd-operator", "other"}},
	} {
		t.Run(name, func(t *testing.T) {
			exts, err := ParseClusterExtension([]byte(tc.in))
			require.NoError(t, err)
			var pkgs []string
			for _, e := range exts {
				pkgs = append(pkgs, e.PackageName)
			}
			assert.Equal(t, tc.pkgs, pkgs)
		})
	}
}

func TestParseClusterExtensionErrorsNameTheField(t *testing.T) {
	for name, tc := range map[string]struct {
		edit func(string) string
		want []string
	}{
		"kind":       {func(s string) string { return strings.Replace(s, "kind: ClusterExtension", "kind: Subscription", 1) }, []string{"document 1", `kind is "Subscription"`}},
		"no package": {func(s string) string { return strings.Replace(s, "packageName: argocd-operator", "packageName: ''", 1) }, []string{`ClusterExtension "argocd"`, "spec.source.catalog.packageName is missing"}},
		"bad package": {func(s string) string {
			return strings.Replace(s, "packageName: argocd-operator", "packageName: Argo_CD", 1)
		}, []string{"spec.source.catalog.packageName \"Argo_CD\""}},
		"policy":        {func(s string) string { return strings.Replace(s, "SelfCertified", "Always", 1) }, []string{`spec.source.catalog.upgradeConstraintPolicy "Always"`, "CatalogProvided"}},
		"channels type": {func(s string) string { return strings.Replace(s, "channels: [alpha, beta]", "channels: alpha", 1) }, []string{"spec.source.catalog.channels", "want a list of strings", "got a JSON string"}},
		"channel name":  {func(s string) string { return strings.Replace(s, "[alpha, beta]", "[alpha, Beta!]", 1) }, []string{"spec.source.catalog.channels[1] \"Beta!\""}},
		"source type":   {func(s string) string { return strings.Replace(s, "sourceType: Catalog", "sourceType: Image", 1) }, []string{`spec.source.sourceType is "Image"`}},
		"no version":    {func(s string) string { return strings.Replace(s, "      version: 0.6.0\n", "", 1) }, []string{"status.install.bundle.version is missing"}},
		"selector": {func(s string) string {
			return strings.Replace(s, "matchLabels:\n          olm.operatorframework.io/metadata.name: operatorhubio", "matchExpressions:\n        - {key: tier, operator: Within, values: [a]}", 1)
		}, []string{"spec.source.catalog.selector", `"Within" is not a valid label selector operator`}},
		"second document": {func(s string) string { return s + "---\n- a list\n" }, []string{"document 2", "got a list"}},
	} {
		t.Run(name, func(t *testing.T) {
			in := tc.edit(extensionYAML)
			require.NotEqual(t, extensionYAML, in, "the edit applies")
			_, err := ParseClusterExtension([]byte(in))
			require.Error(t, err)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := ParseClusterExtension([]byte("# nothing\n"))
	assert.ErrorContains(t, err, "no ClusterExtension found")
	_, err = ParseClusterExtension([]byte("spec: [\n"))
	assert.Error(t, err)
}

// extFixture loads catalogs/NAME.json of testdata/olmv1 as a catalog.
func extFixture(t *testing.T, name string, priority int, files ...string) Catalog {
	t.Helper()
	c := &fbc.Catalog{}
	for _, f := range files {
		p := filepath.Join("testdata", "olmv1", "catalogs", f+".json")
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		require.NoError(t, c.LoadFile(f+".json", data))
	}
	return Catalog{Name: name, Priority: priority, Catalog: c}
}

func extPassedOver(a ExtensionAnswer, bundle, catalog string) *PassedOver {
	for i := range a.PassedOver {
		if a.PassedOver[i].Bundle == bundle && a.PassedOver[i].Catalog == catalog {
			return &a.PassedOver[i]
		}
	}
	return nil
}

func resolveExt(t *testing.T, cats []Catalog, e ClusterExtension) ExtensionAnswer {
	t.Helper()
	a, err := ResolveExtension(context.Background(), cats, e)
	require.NoError(t, err)
	return a
}

func TestResolveExtensionSaysWhyOthersWerePassedOver(t *testing.T) {
	a, b := extFixture(t, "cat-a", 1, "twin-a"), extFixture(t, "cat-b", 0, "twin-b")
	ans := resolveExt(t, []Catalog{a, b}, ClusterExtension{PackageName: "twin"})
	require.NotNil(t, ans.Bundle)
	assert.Equal(t, "twin.v1.1.0", *ans.Bundle)
	assert.Equal(t, "cat-a", ans.Catalog)
	assert.Empty(t, ans.Error)
	po := extPassedOver(ans, "twin.v2.1.0", "cat-b")
	require.NotNil(t, po, "%+v", ans.PassedOver)
	assert.Equal(t, PassedCatalogPriority, po.Rule)
	assert.Contains(t, po.Reason, "cat-a has a higher priority (1)")
	assert.Equal(t, PassedLowerVersion, extPassedOver(ans, "twin.v2.0.0", "cat-b").Rule)
	assert.Equal(t, PassedLowerVersion, extPassedOver(ans, "twin.v1.0.0", "cat-a").Rule)
	assert.Nil(t, extPassedOver(ans, "twin.v1.1.0", "cat-a"), "the bundle picked is not passed over")

	// Channels and ranges.
	ans = resolveExt(t, []Catalog{b}, ClusterExtension{PackageName: "twin", Channels: []string{"stable"}, Version: "<2.0.0"})
	assert.Equal(t, "twin.v1.0.0", *ans.Bundle)
	assert.Equal(t, PassedChannel, extPassedOver(ans, "twin.v2.1.0", "cat-b").Rule)
	assert.Contains(t, extPassedOver(ans, "twin.v2.1.0", "cat-b").Reason, "it is in candidate")
	assert.Equal(t, PassedVersionRange, extPassedOver(ans, "twin.v2.0.0", "cat-b").Rule)

	// Upgrade edges.
	ans = resolveExt(t, []Catalog{b}, ClusterExtension{PackageName: "twin", Installed: &InstalledBundle{Name: "twin.v2.0.0", Version: "2.0.0"}})
	assert.Equal(t, "twin.v2.1.0", *ans.Bundle)
	assert.Equal(t, PassedNotSuccessor, extPassedOver(ans, "twin.v1.0.0", "cat-b").Rule)
	assert.Equal(t, PassedLowerVersion, extPassedOver(ans, "twin.v2.0.0", "cat-b").Rule, "staying is allowed, but an upgrade ranks higher")
	ans = resolveExt(t, []Catalog{b}, ClusterExtension{PackageName: "twin", UpgradeConstraintPolicy: PolicySelfCertified, Installed: &InstalledBundle{Name: "twin.v2.1.0", Version: "2.1.0"}, Version: "1.x"})
	assert.Equal(t, "twin.v1.0.0", *ans.Bundle, "SelfCertified allows a downgrade")
}

func TestResolveExtensionTiesAndNothingFoundAreAnswers(t *testing.T) {
	a, b := extFixture(t, "cat-a", 3, "twin-a"), extFixture(t, "cat-b", 3, "twin-b")
	ans := resolveExt(t, []Catalog{b, a}, ClusterExtension{PackageName: "twin", Channels: []string{"stable"}})
	assert.Nil(t, ans.Bundle)
	assert.Equal(t, `found bundles for package "twin" in channels [stable] in multiple catalogs with the same priority [cat-a cat-b]`, ans.Error)
	assert.Contains(t, strings.Join(ans.Reasons, "\n"), "give one catalog a higher spec.priority")
	assert.Equal(t, PassedAmbiguous, extPassedOver(ans, "twin.v2.0.0", "cat-b").Rule)

	ans = resolveExt(t, []Catalog{a}, ClusterExtension{PackageName: "twin", Version: ">=3.0.0", Installed: &InstalledBundle{Name: "twin.v1.0.0", Version: "1.0.0"}})
	assert.Nil(t, ans.Bundle)
	assert.Equal(t, `error upgrading from currently installed version "1.0.0": no bundles found for package "twin" matching version ">=3.0.0"`, ans.Error)
	assert.Contains(t, strings.Join(ans.Reasons, "\n"), "2 outside the version range")

	ans = resolveExt(t, []Catalog{a}, ClusterExtension{})
	assert.Equal(t, "spec.source.catalog.packageName is required", ans.Error)

	ans = resolveExt(t, []Catalog{a}, ClusterExtension{PackageName: "nosuch"})
	assert.Equal(t, `no bundles found for package "nosuch"`, ans.Error)
	assert.Contains(t, ans.Reasons, "catalog cat-a does not have package nosuch")

	ans = resolveExt(t, []Catalog{a}, ClusterExtension{PackageName: "twin", Version: "1.x || foo"})
	assert.Equal(t, `desired version range "1.x || foo" is invalid: improper constraint: " foo"`, ans.Error)

	ans = resolveExt(t, []Catalog{a}, ClusterExtension{PackageName: "twin", Selector: &LabelSelector{MatchExpressions: []LabelSelectorRequirement{{Key: CatalogNameLabel, Operator: "In"}}}})
	assert.True(t, strings.HasPrefix(ans.Error, "desired catalog selector is invalid: "), ans.Error)

	ans = resolveExt(t, []Catalog{a}, ClusterExtension{PackageName: "twin", Installed: &InstalledBundle{Name: "twin.v1.0.0", Version: "1.0"}})
	assert.True(t, strings.HasPrefix(ans.Error, "error walking catalogs: error finding upgrade edges: failed to get version and release of installed bundle: "), ans.Error)
}

func TestResolveExtensionDeprecationsRankLast(t *testing.T) {
	main := extFixture(t, "main", 0, "dep")
	ans := resolveExt(t, []Catalog{main}, ClusterExtension{PackageName: "dep"})
	assert.Equal(t, "dep.v2.0.0-beta.1", *ans.Bundle, "without a range a pre-release counts")
	ans = resolveExt(t, []Catalog{main}, ClusterExtension{PackageName: "dep", Channels: []string{"stable"}})
	assert.Equal(t, "dep.v1.2.0", *ans.Bundle)
	assert.False(t, ans.Deprecated)
	po := extPassedOver(ans, "dep.v1.3.0", "main")
	require.NotNil(t, po)
	assert.Equal(t, PassedDeprecated, po.Rule)

	ans = resolveExt(t, []Catalog{main}, ClusterExtension{PackageName: "dep", Channels: []string{"beta"}, Version: "1.3.x"})
	assert.Equal(t, "dep.v1.3.0", *ans.Bundle)
	assert.True(t, ans.Deprecated)
	why := strings.Join(ans.Reasons, "\n")
	assert.Contains(t, why, "data-loss bug")
	assert.Contains(t, why, "the beta channel is closed")

	// A catalog whose best is not deprecated wins over a higher priority
	// one whose best is.
	ans = resolveExt(t, []Catalog{extFixture(t, "alldep", 10, "dep-all"), extFixture(t, "clean", 0, "dep-clean")}, ClusterExtension{PackageName: "dep"})
	assert.Equal(t, "dep.v1.0.5", *ans.Bundle)
	assert.Equal(t, "clean", ans.Catalog)
	assert.Equal(t, PassedDeprecated, extPassedOver(ans, "dep.v1.4.0", "alldep").Rule)

	ans = resolveExt(t, []Catalog{main}, ClusterExtension{PackageName: "olddep"})
	assert.Contains(t, strings.Join(ans.Reasons, "\n"), "package olddep is deprecated: olddep is no longer maintained")
}

func TestResolveExtensionRefusesABundleThatDeclaresADependency(t *testing.T) {
	nd := extFixture(t, "nd", 0, "needsdep")
	ans := resolveExt(t, []Catalog{nd}, ClusterExtension{PackageName: "needsdep"})
	assert.Nil(t, ans.Bundle)
	assert.Equal(t, `validating bundle "nd.v1.3.0": bundle "nd.v1.3.0" has a dependency declared via property "olm.package.required" which is currently not supported`, ans.Error)
	po := extPassedOver(ans, "nd.v1.3.0", "nd")
	require.NotNil(t, po)
	assert.Equal(t, PassedNotInstallable, po.Rule)
	assert.Contains(t, strings.Join(ans.Reasons, "\n"), "narrow spec.source.catalog.version")

	ans = resolveExt(t, []Catalog{nd}, ClusterExtension{PackageName: "needsdep", Version: "<1.1.0"})
	assert.Equal(t, "nd.v1.0.0", *ans.Bundle)
}

func TestResolveExtensionStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := ResolveExtension(ctx, []Catalog{extFixture(t, "a", 0, "twin-a")}, ClusterExtension{PackageName: "twin"})
	assert.ErrorIs(t, err, context.Canceled)
}

func TestResolveExtensionNamesWhatRefusesTheBundleAtInstall(t *testing.T) {
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("c.json", []byte(`{"schema":"olm.package","name":"own","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"own","entries":[{"name":"own.v1.0.0"}]}
{"schema":"olm.bundle","name":"own.v1.0.0","package":"own","image":"example.invalid/own:1","properties":[{"type":"olm.package","value":{"packageName":"own","version":"1.0.0"}},{"type":"olm.csv.metadata","value":{"installModes":[{"type":"OwnNamespace","supported":true},{"type":"AllNamespaces","supported":false}]}}]}
{"schema":"olm.deprecations","package":"bad","entries":"not a list"}
{"schema":"olm.package","name":"bad","defaultChannel":"stable"}
`)))
	ans := resolveExt(t, []Catalog{{Name: "c", Catalog: c}}, ClusterExtension{PackageName: "own"})
	require.NotNil(t, ans.Bundle, "operator-controller's resolver picks it; the install refuses it")
	assert.Contains(t, strings.Join(ans.Reasons, "\n"), "operator-controller will refuse to install it")

	ans = resolveExt(t, []Catalog{{Name: "c", Catalog: c}}, ClusterExtension{PackageName: "bad"})
	assert.True(t, strings.HasPrefix(ans.Error, `error walking catalogs: error getting package "bad" from catalog "c": error loading package "bad": parse deprecation: `), ans.Error)
}

func TestResolveExtensionSaysWhenTwoBundlesRankTheSame(t *testing.T) {
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("c.json", []byte(`{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.b"},{"name":"p.a"}]}
{"schema":"olm.bundle","name":"p.b","package":"p","image":"example.invalid/p:b","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"p.a","package":"p","image":"example.invalid/p:a","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0+01"}}]}
`)))
	ans := resolveExt(t, []Catalog{{Name: "c", Catalog: c}}, ClusterExtension{PackageName: "p"})
	require.NotNil(t, ans.Bundle)
	assert.Equal(t, "p.a", *ans.Bundle)
	assert.Contains(t, strings.Join(ans.Reasons, "\n"), "p.a and p.b of catalog c rank the same")
	assert.Contains(t, extPassedOver(ans, "p.b", "c").Reason, "operator-controller takes either")
}
