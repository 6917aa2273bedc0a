package clusterstate

import (
	"encoding/json"
	"errors"
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/resolve"
	"github.com/opmkit/opm/internal/yamldoc"
)

func read(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	return b
}

func TestReadSubscriptionsList(t *testing.T) {
	t.Parallel()
	subs, err := ReadSubscriptions("subscriptions.yaml", read(t, "subscriptions.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []Subscription{
		{Namespace: "operators", From: "subscriptions.yaml:3", Subscription: resolve.Subscription{
			Name: "etcd", Package: "etcd", Channel: "clusterwide-alpha", StartingCSV: "etcdoperator.v0.9.2-clusterwide",
			Catalog: "etcd", CatalogNamespace: "openshift-marketplace", InstalledCSV: "etcdoperator.v0.9.2-clusterwide"}},
		{Namespace: "pelorus", From: "subscriptions.yaml:25", Subscription: resolve.Subscription{
			Name: "pelorus", Package: "pelorus-operator", Catalog: "pelorus", CatalogNamespace: "pelorus"}},
	}, subs)
}

func TestReadSubscriptionsDocuments(t *testing.T) {
	t.Parallel()
	one := "apiVersion: operators.coreos.com/v1alpha1\nkind: Subscription\nmetadata: {name: a, namespace: x}\nspec: {name: a, channel: stable}\n"
	subs, err := ReadSubscriptions("one.yaml", []byte(one))
	require.NoError(t, err)
	require.Len(t, subs, 1)
	assert.Equal(t, "stable", subs[0].Channel)

	subs, err = ReadSubscriptions("two.yaml", []byte(one+"---\n"+one+"---\n"))
	require.NoError(t, err)
	assert.Len(t, subs, 2, "several documents, an empty last one dropped")

	subs, err = ReadSubscriptions("list.json", []byte(`{"kind":"SubscriptionList","items":[{"kind":"Subscription","spec":{"name":"b"}}]}`))
	require.NoError(t, err)
	require.Len(t, subs, 1)
	assert.Equal(t, "b", subs[0].Package)
	assert.Empty(t, subs[0].Namespace)
}

func TestReadSubscriptionsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ data, want string }{
		{"kind: List\nitems:\n- kind: Subscription\n  spec:\n    channel: stable\n", "s.yaml:4: items[0].spec.name: missing: a Subscription names its package in spec.name"},
		{"kind: Subscription\nspec:\n  name: [a]\n", "s.yaml:3: spec.name: is a list, want a string"},
		{"kind: ClusterServiceVersion\nmetadata: {name: x}\n", "s.yaml:1: kind: is ClusterServiceVersion, want Subscription (operators.coreos.com/v1alpha1)"},
		{"apiVersion: v1\nkind: Subscription\nspec: {name: a}\n", "s.yaml:1: apiVersion: is v1, want operators.coreos.com/v1alpha1"},
		{"spec: {name: a}\n", "s.yaml:1: kind: missing: want Subscription"},
		{"- a\n- b\n", "s.yaml:1: document 1 is a list, not an object"},
		{"kind: List\nitems: 3\n", "s.yaml:2: items: is a number, want a list of objects"},
		{"kind: List\nitems:\n- 3\n", "s.yaml:3: items[0]: is a number, want an object"},
		{"kind: Subscription\nspec: x\n", "s.yaml:2: spec: is a string, want a mapping"},
		{"kind: [\n", "s.yaml:"},
	} {
		_, err := ReadSubscriptions("s.yaml", []byte(tc.data))
		require.Error(t, err, tc.data)
		assert.Contains(t, err.Error(), tc.want, tc.data)
		var fe *FieldError
		var se *yamldoc.SyntaxError
		assert.True(t, errors.As(err, &fe) || errors.As(err, &se), "%T", err)
	}
}

func TestReadCSVs(t *testing.T) {
	t.Parallel()
	csvs, err := ReadCSVs("csvs.yaml", read(t, "csvs.yaml"))
	require.NoError(t, err)
	assert.Equal(t, []CSV{
		{Namespace: "operators", From: "csvs.yaml:3", Installed: resolve.Installed{Package: "etcd", CSV: "etcdoperator.v0.9.2-clusterwide", Provided: []resolve.GVK{
			{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdCluster"},
			{Group: "etcd.database.coreos.com", Version: "v1beta2", Kind: "EtcdBackup"},
			{Group: "metrics.example.com", Version: "v1", Kind: "Metric"},
		}}},
		// The copy in default is left out; the package comes from the label.
		{Namespace: "pelorus", From: "csvs.yaml:45", Installed: resolve.Installed{Package: "grafana-operator", CSV: "grafana-operator.v4.8.0", Provided: []resolve.GVK{
			{Group: "integreatly.org", Version: "v1alpha1", Kind: "Grafana"},
		}}},
		{Namespace: "pelorus", From: "csvs.yaml:58", Installed: resolve.Installed{CSV: "prometheusoperator.0.47.0"}},
	}, csvs)
}

func TestReadCSVsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ data, want string }{
		{"kind: ClusterServiceVersion\nmetadata: {namespace: x}\n", "c.yaml:2: metadata.name: missing"},
		{"kind: ClusterServiceVersion\nmetadata: {name: a}\nspec:\n  customresourcedefinitions:\n    owned:\n    - name: foos\n      version: v1\n      kind: Foo\n",
			`c.yaml:6: spec.customresourcedefinitions.owned[0]: want name (PLURAL.GROUP), version and kind as strings, got name "foos"`},
		{"kind: ClusterServiceVersion\nmetadata: {name: a}\nspec:\n  apiservicedefinitions:\n    owned: {a: b}\n", "c.yaml:5: spec.apiservicedefinitions.owned: is a mapping, want a list"},
		{"kind: ClusterServiceVersion\nmetadata:\n  name: a\n  annotations:\n    operatorframework.io/properties: '{'\n", `c.yaml:5: metadata.annotations["operatorframework.io/properties"]: not a JSON properties document`},
		{"kind: Subscription\nspec: {name: a}\n", "c.yaml:1: kind: is Subscription, want ClusterServiceVersion"},
	} {
		_, err := ReadCSVs("c.yaml", []byte(tc.data))
		require.Error(t, err, tc.data)
		assert.Contains(t, err.Error(), tc.want, tc.data)
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]resolve.Subscription{
		"etcd":                           {Package: "etcd"},
		"etcd/alpha":                     {Package: "etcd", Channel: "alpha"},
		"etcd@etcdoperator.v0.9.0":       {Package: "etcd", StartingCSV: "etcdoperator.v0.9.0"},
		"etcd/alpha@etcdoperator.v0.9.0": {Package: "etcd", Channel: "alpha", StartingCSV: "etcdoperator.v0.9.0"},
	} {
		got, err := ParseSubscription(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"", "/alpha", "etcd/", "etcd@", "etcd/a/b", "etcd@a@b"} {
		_, err := ParseSubscription(bad)
		assert.ErrorContains(t, err, "subscription", bad)
	}
	in, err := ParseInstalled("etcd=etcdoperator.v0.9.0")
	require.NoError(t, err)
	assert.Equal(t, resolve.Installed{Package: "etcd", CSV: "etcdoperator.v0.9.0"}, in)
	for _, bad := range []string{"etcd", "=x", "etcd=", "a=b=c"} {
		_, err := ParseInstalled(bad)
		assert.ErrorContains(t, err, "write PKG=CSV", bad)
	}
}

func TestQuestions(t *testing.T) {
	t.Parallel()
	cat := &fbc.Catalog{Bundles: []fbc.Bundle{{Name: "prometheusoperator.0.47.0", Package: "prometheus"}}}
	catalogs := []resolve.Catalog{{Name: "etcd", Catalog: cat}, {Name: "pelorus", Namespace: "pelorus", Catalog: cat}}
	subs, err := ReadSubscriptions("subscriptions.yaml", read(t, "subscriptions.yaml"))
	require.NoError(t, err)
	csvs, err := ReadCSVs("csvs.yaml", read(t, "csvs.yaml"))
	require.NoError(t, err)
	flagSub, err := ParseSubscription("grafana-operator/v4")
	require.NoError(t, err)
	st := State{Subscriptions: append(subs, Subscription{Subscription: flagSub}), Installed: csvs}
	assert.Equal(t, DefaultNamespace, st.Namespace(""), "two namespaces in the files")

	qs, err := st.Questions(catalogs, "")
	require.NoError(t, err)
	require.Len(t, qs, 3)
	assert.Equal(t, []string{"default", "operators", "pelorus"}, []string{qs[0].Namespace, qs[1].Namespace, qs[2].Namespace})
	assert.Equal(t, []resolve.Subscription{{Package: "grafana-operator", Channel: "v4"}}, qs[0].Subscriptions)
	// openshift-marketplace names the global catalog etcd.
	assert.Equal(t, "", qs[1].Subscriptions[0].CatalogNamespace)
	assert.Len(t, qs[1].Installed, 1)
	// pelorus's catalog is namespace-local; the CSV without a package is
	// found in the catalogs.
	p := qs[2]
	assert.Equal(t, "pelorus", p.Subscriptions[0].CatalogNamespace)
	assert.Equal(t, []string{"grafana-operator", "prometheus"}, []string{p.Installed[0].Package, p.Installed[1].Package})

	qs, err = st.Questions(catalogs, "pelorus")
	require.NoError(t, err)
	require.Len(t, qs, 1, "--namespace keeps one namespace; the flag's Subscription joins it")
	assert.Len(t, qs[0].Subscriptions, 2)
	assert.Equal(t, "grafana-operator.v4.8.0", qs[0].Subscriptions[1].InstalledCSV, "the installed CSV of the package is the Subscription's")

	_, err = st.Questions(catalogs[:1], "")
	assert.ErrorContains(t, err, `subscriptions.yaml:25: subscription to pelorus-operator names catalog "pelorus" (spec.source) in namespace "pelorus", and no catalog of that name is given there or globally (the catalogs given are etcd)`)

	// A Subscription's installedCSV is installed, even without a CSV file.
	qs, err = State{Subscriptions: subs[:1]}.Questions(catalogs, "")
	require.NoError(t, err)
	assert.Equal(t, []resolve.Installed{{Package: "etcd", CSV: "etcdoperator.v0.9.2-clusterwide"}}, qs[0].Installed)
	// A catalog given in the namespace a Subscription names as
	// spec.sourceNamespace: that is the global catalog namespace.
	qs, err = State{Subscriptions: subs[:1]}.Questions([]resolve.Catalog{{Name: "etcd", Namespace: "openshift-marketplace", Catalog: cat}}, "")
	require.NoError(t, err)
	assert.Equal(t, "openshift-marketplace", qs[0].GlobalNamespace)
	assert.Equal(t, "openshift-marketplace", qs[0].Subscriptions[0].CatalogNamespace)

	// A flag's Subscription takes the preferred catalog with its package.
	cats := []resolve.Catalog{{Name: "low", Priority: -1, Catalog: cat}, {Name: "first", Catalog: cat}, {Name: "second", Catalog: cat},
		{Name: "elsewhere", Namespace: "x", Priority: 9, Catalog: cat}, {Name: "empty", Priority: 9, Catalog: &fbc.Catalog{}}}
	qs, err = State{Subscriptions: []Subscription{{Subscription: resolve.Subscription{Package: "prometheus"}}}}.Questions(cats, "ns")
	require.NoError(t, err)
	assert.Equal(t, "first", qs[0].Subscriptions[0].Catalog)
	b, err := json.Marshal(qs[0])
	require.NoError(t, err)
	assert.Contains(t, string(b), `"namespace":"ns"`)
}
