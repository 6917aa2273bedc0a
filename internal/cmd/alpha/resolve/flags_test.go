package resolve_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/alpha/resolve"
	"github.com/opmkit/opm/internal/cmd/catalogflag"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	resolver "github.com/opmkit/opm/internal/resolve"
)

const (
	mainCat = "testdata/catalogs/main"
	depsCat = "testdata/catalogs/deps"
)

func TestMain(m *testing.M) { cmdtest.Main(m) }

func TestResolveFlags(t *testing.T) {
	t.Parallel()
	o, err := cmdtest.Parse(t, resolve.NewCmd, "--catalog", "a/=5", "--catalog", "name=x,source=b.db", "--subscription", "p/c@p.v1",
		"--subscriptions", "s.yaml", "--installed", "q=q.v1", "--installed", "csvs.yaml", "-n", "ns", "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, resolve.Options{
		Catalogs:      []catalogflag.Spec{{Source: "a/", Priority: 5}, {Name: "x", Source: "b.db"}},
		Subscriptions: []string{"p/c@p.v1"}, SubscriptionFiles: []string{"s.yaml"}, Installed: []string{"q=q.v1", "csvs.yaml"},
		Namespace: "ns", Output: "json", Image: o.Image,
	}, *o)
	_, err = cmdtest.Parse(t, resolve.NewCmd, "--subscription", "p")
	assert.ErrorContains(t, err, `required flag(s) "catalog" not set`)
	_, err = cmdtest.Parse(t, resolve.NewCmd, "--catalog", "a/", "--olmv1")
	assert.ErrorContains(t, err, "if any flags in the group [olmv1 cluster-extension] are set they must all be set")
	_, err = cmdtest.Parse(t, resolve.NewCmd, "--catalog", "a/", "--olmv1", "--cluster-extension", "x", "--subscription", "p")
	assert.ErrorContains(t, err, "none of the others can be")
	_, err = cmdtest.Parse(t, resolve.NewCmd, "--catalog", "a/=x", "--subscription", "p")
	assert.ErrorContains(t, err, "not a whole number")
}

// The questions the command asks, read from flags and files (recorded on
// their way to the real resolver), and how it prints the answers.
func TestResolveQuestionsAndRendering(t *testing.T) {
	var got []resolver.Question
	defer resolve.SetResolver(func(ctx context.Context, q resolver.Question) (resolver.Answer, error) {
		got = append(got, q)
		return resolver.Resolve(ctx, q)
	})()
	o := cmdtest.New(t)
	r := o.Run("alpha", "resolve", "--catalog", mainCat+"=10", "--catalog", "name=deps,source="+depsCat+",priority=-1",
		"--subscriptions", "testdata/subscriptions.yaml", "--installed", "testdata/csvs.yaml")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	require.Len(t, got, 1)
	q := got[0]
	assert.Equal(t, "shop", q.Namespace)
	assert.Equal(t, "olm", q.GlobalNamespace, "the Subscription's sourceNamespace for a global catalog")
	require.Len(t, q.Catalogs, 2)
	assert.Equal(t, []string{"main", "deps"}, []string{q.Catalogs[0].Name, q.Catalogs[1].Name})
	assert.Equal(t, []int{10, -1}, []int{q.Catalogs[0].Priority, q.Catalogs[1].Priority})
	assert.Len(t, q.Catalogs[0].Catalog.Bundles, 3)
	assert.Equal(t, []resolver.Subscription{{Name: "app", Package: "app", Channel: "stable", Catalog: "main", InstalledCSV: "app.v1.0.0"}}, q.Subscriptions,
		"sourceNamespace olm names the global catalog main")
	assert.Equal(t, []resolver.Installed{{Package: "app", CSV: "app.v1.0.0", Provided: []resolver.GVK{{Group: "app.example.com", Version: "v1", Kind: "App"}}}}, q.Installed,
		"the copied CSV is left out")
	lines := strings.Split(r.Out, "\n")
	require.Len(t, lines, 6, r.Out)
	assert.Equal(t, "namespace shop:", lines[0])
	assert.Equal(t, "  app: upgrade app.v1.0.0 -> app.v1.1.0 (channel stable, catalog main)", lines[1])
	assert.Contains(t, lines[2], "      app.v1.1.0 ", "a reason, indented")
	assert.Equal(t, "  db (dependency): install db.v1.0.0 (channel stable, catalog deps)", lines[3])
	assert.Contains(t, lines[4], "app.v1.1.0 requires db >=1.0.0")
	assert.Empty(t, r.ErrOut)

	// A catalog given in the namespace the Subscription names.
	got = nil
	r = o.Run("alpha", "resolve", "--catalog", "name=main,namespace=olm,source="+mainCat, "--catalog", depsCat, "--subscriptions", "testdata/subscriptions.yaml")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, "olm", got[0].GlobalNamespace)
	assert.Contains(t, r.Out, "  app: upgrade app.v1.0.0 -> app.v1.1.0 (channel stable, catalog main)\n")

	got = nil
	r = o.Run("alpha", "resolve", "--catalog", mainCat, "--catalog", depsCat, "--subscription", "app/stable@app.v1.0.0",
		"--subscription", "db", "--installed", "app=app.v1.0.0", "-n", "shop", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	require.Len(t, got, 1)
	assert.Equal(t, []resolver.Subscription{{Package: "app", Channel: "stable", StartingCSV: "app.v1.0.0", InstalledCSV: "app.v1.0.0", Catalog: "main"}, {Package: "db", Catalog: "deps"}}, got[0].Subscriptions)
	var doc map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	require.Len(t, doc["operators"], 2)
	app := doc["operators"][0]
	assert.NotEmpty(t, app["reasons"])
	delete(app, "reasons")
	assert.Equal(t, map[string]any{"namespace": "shop", "package": "app", "bundle": "app.v1.1.0", "channel": "stable", "catalog": "main",
		"catalogNamespace": "openshift-marketplace", "installed": "app.v1.0.0"}, app)
	assert.Equal(t, "db.v1.0.0", doc["operators"][1]["bundle"])
	assert.Nil(t, doc["operators"][1]["dependency"], "db is subscribed to: not a dependency")
}

// The rabbitmq case of the issue in small: the newest bundle needs what no
// catalog has, so OLM installs the newest that needs nothing missing.
func TestResolveMissingDependency(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("alpha", "resolve", "--catalog", mainCat, "--subscription", "app")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "namespace default:\n  app: install app.v1.0.0 (channel stable, catalog main)\n"), r.Out)
	assert.Contains(t, r.Out, "app.v1.1.0 requires db >=1.0.0, which no catalog given has")

	r = o.Run("alpha", "resolve", "--catalog", mainCat, "--catalog", depsCat, "--subscription", "app", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var doc struct {
		Operators []struct {
			Package    string   `json:"package"`
			Bundle     *string  `json:"bundle"`
			Catalog    string   `json:"catalog"`
			Dependency bool     `json:"dependency"`
			Reasons    []string `json:"reasons"`
		} `json:"operators"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	require.Len(t, doc.Operators, 2)
	assert.Equal(t, "app.v1.1.0", *doc.Operators[0].Bundle, "1.2.0 needs an API no catalog provides")
	assert.Contains(t, strings.Join(doc.Operators[0].Reasons, "\n"), "Cache (cache.example.com/v1)")
	assert.Equal(t, "db", doc.Operators[1].Package)
	assert.Equal(t, "deps", doc.Operators[1].Catalog)
	assert.True(t, doc.Operators[1].Dependency)
}

// A namespace that does not resolve is printed, and the status is 1.
func TestResolveUnsatisfiableStatus(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	// Its startingCSV needs an API no catalog provides.
	r := o.Run("alpha", "resolve", "--catalog", mainCat, "--catalog", depsCat, "--subscription", "app@app.v1.2.0")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.True(t, strings.HasPrefix(r.Out, "namespace default: OLM resolves nothing (its constraints cannot all be satisfied):\n  app: nothing installed\n"), r.Out)
	assert.Contains(t, r.Out, "app.v1.2.0 requires an operator providing Cache (cache.example.com/v1)")
	assert.Empty(t, r.ErrOut)
	r = o.Run("alpha", "resolve", "--catalog", mainCat, "--subscription", "app@app.v1.2.0", "-o", "json")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	var doc map[string][]map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.Out), &doc))
	require.Len(t, doc["operators"], 1)
	assert.Nil(t, doc["operators"][0]["bundle"])
	assert.Contains(t, doc["operators"][0], "bundle", "null, not left out")

	// A package no catalog has: nothing for a new Subscription, status 1.
	r = o.Run("alpha", "resolve", "--catalog", mainCat, "--subscription", "nope")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "  nope: nothing installed\n")
}

func TestResolveUsageErrors(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, tc := range []struct {
		args    []string
		want    string
		ownCats bool
	}{
		{[]string{"--subscription", "app/"}, `--subscription: subscription "app/": empty channel`, false},
		{[]string{"-n", "x"}, "give --subscription or --subscriptions (or --olmv1 --cluster-extension)", false},
		{[]string{"--subscriptions", "testdata/csvs.yaml"}, "--subscriptions: testdata/csvs.yaml:5: items[0].kind: is ClusterServiceVersion, want Subscription", false},
		{[]string{"--subscriptions", "testdata/nope.yaml"}, "--subscriptions: open testdata/nope.yaml: no such file", false},
		{[]string{"--subscription", "app", "--installed", "testdata/subscriptions.yaml"}, "--installed: testdata/subscriptions.yaml:5: items[0].kind: is Subscription, want ClusterServiceVersion", false},
		{[]string{"--subscription", "app", "--installed", "app"}, "--installed app: neither PKG=CSV nor a file of CSVs", false},
		{[]string{"--subscription", "app", "--installed", "app="}, `--installed: installed "app=": write PKG=CSV`, false},
		{[]string{"--subscriptions", "testdata/subscriptions.yaml", "--catalog", depsCat}, `names catalog "main" (spec.source)`, true},
		{[]string{"--subscriptions", "testdata/subscriptions.yaml", "--catalog", "name=main,source=" + mainCat + ",namespace=elsewhere"}, `names catalog "main" (spec.source) in namespace "olm", and no catalog of that name is given there or globally (the catalogs given are main)`, true},
		{[]string{"--subscriptions", "testdata/subscriptions.yaml", "-n", "elsewhere"}, "no Subscription in namespace elsewhere", false},
		{[]string{"--subscription", "app", "--catalog", "testdata/nope"}, "--catalog testdata/nope: testdata/nope: no such file or directory", false},
		{[]string{"--subscription", "app", "-o", "yaml"}, `invalid --output "yaml"`, false},
	} {
		args := []string{"alpha", "resolve", "--catalog", mainCat}
		if tc.ownCats {
			args = args[:2]
		}
		r := o.Run(append(args, tc.args...)...)
		assert.Equal(t, exit.UpstreamUsage, r.Code, tc.args)
		assert.Contains(t, r.ErrOut, tc.want, tc.args)
		assert.Empty(t, r.Out, tc.args)
	}
}
