package graph

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/fbc"
)

// demo is testdata/upgrades: channel stable (the default) has a replaces
// chain 1.0.0 → 1.0.1 → 1.1.0 → 1.2.0 → 2.0.0, with 1.0.2 replacing 1.0.1
// but skipped by 1.1.0, and 1.2.0's skipRange >=1.0.0 <1.2.0; channel
// fast has 1.2.0 → 2.0.0 → 2.1.0 (skipRange >=1.2.0 <2.1.0, and 2.1.0 is
// deprecated); candidate-1.0 has 1.0.0 → 1.0.1.
func demo(t *testing.T) *Package {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "upgrades", "catalog.json"))
	require.NoError(t, err)
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("catalog.json", raw))
	p, err := NewPackage(c, "demo")
	require.NoError(t, err)
	return p
}

func v(s string) string { return "demo.v" + s }

// names is a path as "from →edge@channel to ...".
func names(p *Path) string {
	var b strings.Builder
	b.WriteString(strings.TrimPrefix(p.From, "demo.v"))
	for _, st := range p.Steps {
		b.WriteString(" →" + st.Edge + "@" + st.Channel + " " + strings.TrimPrefix(st.To, "demo.v"))
	}
	return b.String()
}

func TestNextV0AndReplacement(t *testing.T) {
	p := demo(t)
	stable := p.Channel("stable")
	order, err := stable.Order()
	require.NoError(t, err)
	assert.Equal(t, []string{v("2.0.0"), v("1.2.0"), v("1.1.0"), v("1.0.1"), v("1.0.0")}, order, "head first, the skipped 1.0.2 left out")

	for _, tc := range []struct {
		from, next, edge, replacement string
	}{
		// The skipRange of 1.2.0 is nearer the head than 1.0.1, which
		// only replaces 1.0.0: the resolver jumps, the server answers the
		// replacement.
		{"1.0.0", "1.2.0", EdgeSkipRange, "1.0.1"},
		{"1.0.1", "1.2.0", EdgeSkipRange, "1.1.0"},
		// 1.0.2 is skipped by 1.1.0 and covered by 1.2.0's skipRange.
		{"1.0.2", "1.2.0", EdgeSkipRange, "1.1.0"},
		{"1.2.0", "2.0.0", EdgeReplaces, "2.0.0"},
		{"2.0.0", "", "", ""},
	} {
		from := p.bundle(v(tc.from))
		st, ok, err := stable.NextV0(from)
		require.NoError(t, err)
		if tc.next == "" {
			assert.False(t, ok, tc.from)
		} else {
			assert.Equal(t, v(tc.next), st.To, tc.from)
			assert.Equal(t, tc.edge, st.Edge, tc.from)
			assert.Equal(t, tc.next, st.Version)
		}
		r, ok := stable.Replacement(v(tc.from))
		if tc.replacement == "" {
			assert.False(t, ok, tc.from)
		} else {
			assert.Equal(t, v(tc.replacement), r.To, tc.from)
		}
	}
	// The server's choice among several: the one nearest the head (1.1.0
	// skips 1.0.2 and 1.0.2 replaces 1.0.1: 1.1.0 is nearer).
	r, _ := stable.Replacement(v("1.0.1"))
	assert.Equal(t, EdgeReplaces, r.Edge)
}

func TestPathV0(t *testing.T) {
	p := demo(t)
	for _, tc := range []struct {
		name string
		q    PathQuery
		want string
		head bool
	}{
		{"default channel, skipRange jump", PathQuery{From: v("1.0.0")}, "1.0.0 →skipRange@stable 1.2.0 →replaces@stable 2.0.0", true},
		{"a version names its bundle", PathQuery{From: "1.0.1"}, "1.0.1 →skipRange@stable 1.2.0 →replaces@stable 2.0.0", true},
		{"a version no bundle has: skipRange only", PathQuery{From: "1.0.5"}, "version 1.0.5 →skipRange@stable 1.2.0 →replaces@stable 2.0.0", true},
		{"already at the head", PathQuery{From: v("2.0.0")}, "2.0.0", true},
		{"to, reached", PathQuery{From: v("1.0.0"), To: "1.2.0"}, "1.0.0 →skipRange@stable 1.2.0", false},
		{"candidate-1.0 ends at its head", PathQuery{From: v("1.0.0"), Channel: "candidate-1.0"}, "1.0.0 →replaces@candidate-1.0 1.0.1", true},
		// The cross-channel move: nothing more in candidate-1.0, stable's
		// skipRange takes 1.0.1 to 1.2.0, and fast's skipRange then
		// offers 2.1.0, newer than stable's 2.0.0.
		{"any channel", PathQuery{From: v("1.0.1"), Channel: "candidate-1.0", AnyChannel: true},
			"1.0.1 →skipRange@stable 1.2.0 →skipRange@fast 2.1.0", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path, err := p.Path(tc.q)
			require.NoError(t, err)
			assert.Equal(t, tc.want, names(path))
			assert.Equal(t, tc.head, path.AtHead)
			assert.Empty(t, path.Unreachable)
			assert.Equal(t, OLMv0, path.Semantics)
		})
	}
}

func TestPathUnreachable(t *testing.T) {
	p := demo(t)
	for _, tc := range []struct {
		q    PathQuery
		want string
	}{
		{PathQuery{From: v("1.0.0"), To: v("1.1.0")},
			`from demo.v1.0.0 OLM installs demo.v1.2.0 (skipRange ">=1.0.0 <1.2.0") instead: it is nearer the channel head, and no edge leads from there back to demo.v1.1.0`},
		{PathQuery{From: v("1.0.0"), To: v("1.0.2")},
			"demo.v1.0.2 is skipped by demo.v1.1.0: OLM v0 never installs a skipped bundle"},
		{PathQuery{From: v("1.2.0"), To: v("2.1.0")},
			"demo.v2.1.0 is not in channel stable (it is in fast; try --channel fast or --any-channel)"},
		{PathQuery{From: v("2.0.0"), To: v("1.2.0")},
			"demo.v1.2.0 (1.2.0) is older than demo.v2.0.0 (2.0.0): OLM does not downgrade"},
	} {
		path, err := p.Path(tc.q)
		require.NoError(t, err)
		assert.False(t, path.Reached, tc.q.To)
		assert.Equal(t, tc.want, path.Unreachable)
	}
	// Cross-channel, 2.1.0 is reached.
	path, err := p.Path(PathQuery{From: v("1.2.0"), To: v("2.1.0"), AnyChannel: true})
	require.NoError(t, err)
	assert.True(t, path.Reached)
	assert.Equal(t, "1.2.0 →skipRange@fast 2.1.0", names(path))

	for _, tc := range []struct {
		q    PathQuery
		want string
	}{
		{PathQuery{From: "nope"}, `--from "nope": package demo has no bundle of that name, and it is not a version`},
		{PathQuery{From: v("1.0.0"), Channel: "beta"}, `package demo has no channel "beta" (it has candidate-1.0, fast, stable)`},
		{PathQuery{From: v("1.0.0"), To: "9.9.9"}, "--to 9.9.9: no bundle of package demo has that version"},
	} {
		_, err := p.Path(tc.q)
		assert.EqualError(t, err, tc.want)
	}
	_, err = NewPackage(&fbc.Catalog{Packages: []fbc.Package{{Name: "a"}}}, "demo")
	assert.EqualError(t, err, `package "demo" is not in the catalog (it has a)`)
}

// A channel with two heads cannot be ordered by OLM v0: its next step is
// an error naming them; the registry server still answers.
func TestNextV0TwoHeads(t *testing.T) {
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("c.json", []byte(`{"schema":"olm.package","name":"x","defaultChannel":"s"}
{"schema":"olm.channel","package":"x","name":"s","entries":[{"name":"x.v1"},{"name":"x.v2","replaces":"x.v1"},{"name":"x.v3","replaces":"x.v1"}]}
`)))
	p, err := NewPackage(c, "x")
	require.NoError(t, err)
	_, _, err = p.Channel("s").NextV0(Bundle{Name: "x.v1"})
	assert.EqualError(t, err, "channel s has 2 heads (x.v2, x.v3); OLM v0 needs one replaces chain to order a channel")
	r, ok := p.Channel("s").Replacement("x.v1")
	assert.True(t, ok)
	assert.Equal(t, "x.v2", r.To)
}

func TestKeepForRange(t *testing.T) {
	p := demo(t)
	k, err := p.KeepForRange(PathQuery{}, ">=1.0.0 <1.2.0")
	require.NoError(t, err)
	var got []string
	for _, b := range k.Bundles {
		got = append(got, b.Name)
	}
	// Every version below 1.2.0 jumps to 1.2.0 by its skipRange.
	assert.Equal(t, []string{v("1.2.0"), v("2.0.0")}, got)
	assert.Equal(t, []string{v("1.0.0"), v("1.0.1"), v("1.0.2"), v("1.1.0")}, k.Bundles[0].For)
	assert.Empty(t, k.Stranded)

	// In candidate-1.0, 1.0.0 needs 1.0.1 (the head).
	k, err = p.KeepForRange(PathQuery{Channel: "candidate-1.0"}, "<1.0.1")
	require.NoError(t, err)
	require.Len(t, k.Bundles, 1)
	assert.Equal(t, v("1.0.1"), k.Bundles[0].Name)

	// A kept bundle deep in the chain keeps the chain above it, which
	// OLM v0 orders the channel by.
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("c.json", []byte(`{"schema":"olm.package","name":"x","defaultChannel":"s"}
{"schema":"olm.channel","package":"x","name":"s","entries":[{"name":"x.v1.0.0"},{"name":"x.v1.1.0","replaces":"x.v1.0.0"},{"name":"x.v1.2.0","replaces":"x.v1.1.0"},{"name":"x.v1.3.0","replaces":"x.v1.2.0","skipRange":">=1.2.0 <1.3.0"}]}
{"schema":"olm.bundle","name":"x.v1.0.0","package":"x","properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"x.v1.1.0","package":"x","properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.1.0"}}]}
{"schema":"olm.bundle","name":"x.v1.2.0","package":"x","properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.2.0"}}]}
{"schema":"olm.bundle","name":"x.v1.3.0","package":"x","properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.3.0"}}]}
`)))
	x, err := NewPackage(c, "x")
	require.NoError(t, err)
	k, err = x.KeepForRange(PathQuery{}, "<1.1.0")
	require.NoError(t, err)
	assert.Equal(t, []KeptBundle{
		{Name: "x.v1.1.0", Version: "1.1.0", For: []string{"x.v1.0.0"}},
		{Name: "x.v1.2.0", Version: "1.2.0", For: []string{"x.v1.0.0"}},
		{Name: "x.v1.3.0", Version: "1.3.0", For: []string{"x.v1.0.0"}},
	}, k.Bundles)
	_, err = x.KeepForRange(PathQuery{}, "bad range")
	assert.ErrorContains(t, err, `--from-range "bad range"`)
}

// From a bundle whose only replacement is skipped, OLM v0 goes nowhere:
// the path says so instead of reaching the head.
func TestPathStuckOnSkipped(t *testing.T) {
	c := &fbc.Catalog{}
	require.NoError(t, c.LoadFile("c.json", []byte(`{"schema":"olm.package","name":"x","defaultChannel":"s"}
{"schema":"olm.channel","package":"x","name":"s","entries":[{"name":"x.v1"},{"name":"x.v2","replaces":"x.v1"},{"name":"x.v3","replaces":"x.v2","skips":["x.v2"]}]}
`)))
	p, err := NewPackage(c, "x")
	require.NoError(t, err)
	path, err := p.Path(PathQuery{From: "x.v1"})
	require.NoError(t, err)
	assert.Empty(t, path.Steps)
	assert.False(t, path.AtHead)
	assert.Equal(t, "OLM stops at x.v1, which is not the head of channel s (x.v3): what replaces or skips it (x.v2) is skipped by another entry, and OLM v0 never installs a skipped bundle", path.Unreachable)
}

// An OLM v1 path asks the resolver it is given at each step and only
// words the edge: it steps, stays (off a head: why), fails (with the
// resolver's error) and passes on the version --from gave for the first
// step alone. resolve.ExtensionSteps is the real resolver; its tests
// check the answers.
func TestPathV1Resolver(t *testing.T) {
	p := demo(t)
	_, err := p.Path(PathQuery{From: v("1.0.0"), OLMv1: true})
	assert.EqualError(t, err, "an OLM v1 path needs operator-controller's resolver (PathQuery.ResolveV1)")

	type call struct{ name, version string }
	var calls []call
	script := map[string]V1Pick{}
	q := PathQuery{OLMv1: true, ResolveV1: func(inst Bundle, version string) (V1Pick, error) {
		calls = append(calls, call{inst.Name, version})
		if pk, ok := script[inst.Name]; ok {
			return pk, nil
		}
		return V1Pick{Bundle: inst.Name, Why: "nothing upgrades from it"}, nil
	}}
	script[v("1.0.0")] = V1Pick{Bundle: v("1.2.0")}
	script[v("1.2.0")] = V1Pick{Bundle: v("2.1.0")}
	q.From = "1.0.0"
	path, err := p.Path(q)
	require.NoError(t, err)
	assert.Equal(t, "1.0.0 →skipRange@stable 1.2.0 →skipRange@fast 2.1.0", names(path))
	assert.True(t, path.AtHead)
	assert.Empty(t, path.Unreachable)
	assert.Equal(t, []call{{v("1.0.0"), "1.0.0"}, {v("1.2.0"), ""}, {v("2.1.0"), ""}}, calls)

	// Staying off a head says why; a failure ends the path with the
	// resolver's error.
	calls = nil
	script[v("1.2.0")] = V1Pick{Bundle: v("1.2.0"), Why: "its successors are deprecated"}
	q.From = v("1.0.0")
	path, err = p.Path(q)
	require.NoError(t, err)
	assert.Equal(t, []call{{v("1.0.0"), ""}, {v("1.2.0"), ""}}, calls, "--from a bundle name: the catalog's version")
	assert.Equal(t, "operator-controller stays at demo.v1.2.0, which is not the head of any of the channels candidate-1.0, fast, stable (demo.v1.0.1, demo.v2.1.0, demo.v2.0.0): its successors are deprecated", path.Unreachable)
	script[v("1.2.0")] = V1Pick{Error: `no bundles found for package "demo"`, Why: "none left"}
	path, err = p.Path(q)
	require.NoError(t, err)
	assert.Equal(t, v("1.2.0"), path.End)
	assert.Equal(t, `no bundles found for package "demo"`, path.Error)
	assert.Equal(t, `operator-controller resolves nothing from demo.v1.2.0: no bundles found for package "demo"; none left`, path.Unreachable)

	// A pick without an edge (another bundle of the installed version).
	script[v("1.2.0")] = V1Pick{Bundle: v("1.0.2")}
	delete(script, v("1.0.2"))
	path, err = p.Path(q)
	require.NoError(t, err)
	require.Len(t, path.Steps, 2)
	assert.Equal(t, Step{From: v("1.2.0"), To: v("1.0.2"), Version: "1.0.2", Edge: EdgeSameVersion}, path.Steps[1])

	// --from a version of a bundle outside the channel asked for: the
	// installed bundle is that one, by name.
	calls = nil
	q.From, q.Channel = "2.1.0", "stable"
	_, err = p.Path(q)
	require.NoError(t, err)
	assert.Equal(t, []call{{v("2.1.0"), "2.1.0"}}, calls)
}
