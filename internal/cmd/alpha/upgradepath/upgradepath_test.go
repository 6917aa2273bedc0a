package upgradepath_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/alpha/upgradepath"
	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc/graph"
	"github.com/opmkit/opm/internal/shareddata"
)

// demo: see internal/fbc/graph/upgrade_test.go for its graph.
const demo = "../../../fbc/graph/testdata/upgrades"

func TestMain(m *testing.M) { cmdtest.Main(m) }

func TestUpgradePathFlags(t *testing.T) {
	t.Parallel()
	o, err := cmdtest.Parse(t, upgradepath.NewCmd, "cat/", "--package", "p", "--channel", "c", "--from", "1.0.0", "--to", "2.0.0", "--olmv1", "-o", "json")
	require.NoError(t, err)
	assert.Equal(t, upgradepath.Options{Source: "cat/", Package: "p", Channel: "c", From: "1.0.0", To: "2.0.0", OLMv1: true, Output: "json", Image: o.Image}, *o)
	_, err = cmdtest.Parse(t, upgradepath.NewCmd, "cat/", "--from", "1.0.0")
	assert.NoError(t, err, "--package is optional")
	_, err = cmdtest.Parse(t, upgradepath.NewCmd, "cat/", "--package", "p")
	assert.ErrorContains(t, err, "at least one of the flags in the group [from from-range] is required")
	_, err = cmdtest.Parse(t, upgradepath.NewCmd, "cat/", "--package", "p", "--from", "1", "--from-range", "<2.0.0")
	assert.ErrorContains(t, err, "none of the others can be")
}

func TestUpgradePathText(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "1.0.0")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, `demo, OLM v0, channel stable:
   demo.v1.0.0 (1.0.0)
 1. demo.v1.2.0 (1.2.0)  skipRange ">=1.0.0 <1.2.0" covers demo.v1.0.0
 2. demo.v2.0.0 (2.0.0)  replaces demo.v1.2.0
demo.v2.0.0 is the head of channel stable: OLM installs nothing more.
`, r.Out)
	assert.Empty(t, r.ErrOut)

	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "demo.v1.0.1", "--channel", "candidate-1.0", "--any-channel")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, `demo, OLM v0, channels candidate-1.0, fast, stable:
   demo.v1.0.1 (1.0.1)
 1. demo.v1.2.0 (1.2.0)  skipRange ">=1.0.0 <1.2.0" covers demo.v1.0.1 in stable
 2. demo.v2.1.0 (2.1.0)  skipRange ">=1.2.0 <2.1.0" covers demo.v1.2.0 in fast
demo.v2.1.0 is the head of channel fast: OLM installs nothing more.
`, r.Out)

	// Unreachable: the answer on stdout, exit status 1.
	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "1.0.0", "--to", "1.0.2")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.Out, "demo.v1.0.2 is unreachable, because demo.v1.0.2 is skipped by demo.v1.1.0: OLM v0 never installs a skipped bundle.\n")
	assert.Empty(t, r.ErrOut)

	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "1.0.0", "--to", "1.2.0")
	assert.Equal(t, exit.OK, r.Code)
	assert.Contains(t, r.Out, "demo.v1.2.0 is reached in 1 step.\n")

	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from-range", ">=1.0.0 <1.2.0")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, `demo, OLM v0, channel stable: to keep every version in ">=1.0.0 <1.2.0" upgrading to the head, keep 2 bundles:
  demo.v1.2.0 (1.2.0)  on the path from demo.v1.0.0, demo.v1.0.1, demo.v1.0.2, demo.v1.1.0
  demo.v2.0.0 (2.0.0)  on the path from demo.v1.0.0, demo.v1.0.1, demo.v1.0.2, demo.v1.1.0
`, r.Out)
}

func TestUpgradePathJSON(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from", "1.0.0", "--olmv1", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var p graph.Path
	require.NoError(t, json.Unmarshal([]byte(r.Out), &p))
	assert.Equal(t, graph.OLMv1, p.Semantics)
	// operator-controller stays on 2.0.0: 2.1.0, which replaces it in
	// fast, is deprecated.
	assert.Equal(t, []graph.Step{
		{From: "demo.v1.0.0", To: "demo.v1.2.0", Version: "1.2.0", Channel: "stable", Edge: graph.EdgeSkipRange, SkipRange: ">=1.0.0 <1.2.0"},
		{From: "demo.v1.2.0", To: "demo.v2.0.0", Version: "2.0.0", Channel: "stable", Edge: graph.EdgeReplaces},
	}, p.Steps)
	assert.True(t, p.AtHead)
	assert.True(t, p.Reached, "without --to the head is what is reached")
	assert.Equal(t, []string{"stable"}, p.HeadOf)

	r = o.Run("alpha", "upgrade-path", demo, "--package", "demo", "--from-range", "<1.0.1", "--channel", "candidate-1.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var k graph.Keep
	require.NoError(t, json.Unmarshal([]byte(r.Out), &k))
	assert.Equal(t, []graph.KeptBundle{{Name: "demo.v1.0.1", Version: "1.0.1", For: []string{"demo.v1.0.0"}}}, k.Bundles)
	assert.Equal(t, []string{}, k.Stranded)
}

// TestUpgradePathOLMv1 walks operator-controller's answers
// (resolve.ExtensionSteps) over testdata/olmv1: down.v2.0.0 is replaced
// by down.v2.1.0 (deprecated) in fast, skipped by down.v1.5.0 (lower) in
// stable, replaced by down.v9 (version "9", unreadable) in odd; channel
// other leaves it out.
func TestUpgradePathOLMv1(t *testing.T) {
	t.Parallel()
	const dir = "testdata/olmv1"
	o := cmdtest.New(t)
	// It stays where the installed bundle outranks every successor, off
	// the heads: said, exit status 0 as for any path without --to.
	r := o.Run("alpha", "upgrade-path", dir, "--olmv1", "--from", "1.0.0")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Equal(t, `down, OLM v1, channels fast, odd, other, stable:
   down.v1.0.0 (1.0.0)
 1. down.v2.0.0 (2.0.0)  replaces down.v1.0.0 in stable
operator-controller stays at down.v2.0.0, which is not the head of any of the channels fast, odd, other, stable (down.v2.1.0, down.v9, down.v3.0.0, down.v1.5.0): down.v2.1.0 (2.1.0) upgrades from it but is deprecated, and operator-controller ranks the installed bundle, which is not, first; down.v1.5.0 (1.5.0) upgrades from it but is not above it (operator-controller keeps the higher version); down.v9 upgrades from it but its version "9" does not read as semver, so operator-controller ranks it last.
`, r.Out)

	r = o.Run("alpha", "upgrade-path", dir, "--olmv1", "--from", "2.0.0", "--to", "down.v2.1.0")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.Out, "down.v2.1.0 is unreachable, because operator-controller stays at down.v2.0.0 although edges lead on to down.v2.1.0: down.v2.1.0 (2.1.0) upgrades from it but is deprecated")

	// Failures: operator-controller's error, in text and JSON, exit 1.
	for _, tc := range []struct {
		args      []string
		err, text string
	}{
		{[]string{"--channel", "other"}, `error upgrading from currently installed version "2.0.0": no bundles found for package "down" in channels [other]`,
			"5 in none of the channels asked for, 1 not an upgrade from the installed bundle"},
		{[]string{"--channel", "nosuch"}, `error upgrading from currently installed version "2.0.0": no bundles found for package "down" in channels [nosuch]`,
			`package down has no channel "nosuch" (it has fast, odd, other, stable)`},
		{[]string{"--channel", "odd"}, `error getting resolved bundle version for bundle "down.v9": No Major.Minor.Patch elements found`,
			"bundle down.v9 has no version operator-controller can read"},
	} {
		args := append([]string{"alpha", "upgrade-path", dir, "--olmv1", "--from", "2.0.0"}, tc.args...)
		r := o.Run(args...)
		assert.Equal(t, exit.Failed, r.Code, tc.args)
		assert.Contains(t, r.Out, "operator-controller resolves nothing from down.v2.0.0: "+tc.err+"; ", tc.args)
		assert.Contains(t, r.Out, tc.text, tc.args)
		r = o.Run(append(args, "-o", "json")...)
		assert.Equal(t, exit.Failed, r.Code, tc.args)
		var p graph.Path
		require.NoError(t, json.Unmarshal([]byte(r.Out), &p), tc.args)
		assert.Equal(t, tc.err, p.Error, tc.args)
		assert.Empty(t, p.Steps, tc.args)
		assert.Equal(t, "down.v2.0.0", p.End, tc.args)
		assert.False(t, p.Reached, tc.args)
	}
	// --from a version is what status.install.bundle.version records:
	// one operator-controller cannot read fails.
	r = o.Run("alpha", "upgrade-path", dir, "--olmv1", "--from", "2.0")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.Out, `operator-controller resolves nothing from down.v2.0.0: error walking catalogs: error finding upgrade edges: failed to get version and release of installed bundle: No Major.Minor.Patch elements found; the installed bundle's version "2.0" (status.install.bundle.version) is not semver`)
}

func TestUpgradePathErrors(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--package", "nope", "--from", "1.0.0"}, `package "nope" not found (the catalog has demo)`},
		{[]string{"--package", "demo", "--from", "9.x"}, `--from "9.x": package demo has no bundle of that name, and it is not a version`},
		{[]string{"--package", "demo", "--from", "1.0.0", "--channel", "beta"}, `package demo has no channel "beta" (it has candidate-1.0, fast, stable)`},
		{[]string{"--package", "demo", "--from", "1.0.0", "--olmv1", "--any-channel"}, "--any-channel is OLM v0's"},
		{[]string{"--package", "demo", "--from", "1.0.0", "-o", "yaml"}, `invalid --output "yaml"`},
		{[]string{"--package", "demo", "--from-range", "1.0.0<2"}, `--from-range "1.0.0<2"`},
	} {
		r := o.Run(append([]string{"alpha", "upgrade-path", demo}, tc.args...)...)
		assert.Equal(t, exit.UpstreamUsage, r.Code, tc.args)
		assert.Contains(t, r.ErrOut, tc.want, tc.args)
		assert.Empty(t, r.Out, tc.args)
	}
}

// TestUpgradePathSQLite reads a reference index database, as opm render
// does: etcd's clusterwide channel, and node-healthcheck-operator's
// skipRanges.
func TestUpgradePathSQLite(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", filepath.Join(dir, "etcd.replaces.db"), "--package", "etcd", "--channel", "clusterwide-alpha", "--from", "etcdoperator.v0.9.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var p graph.Path
	require.NoError(t, json.Unmarshal([]byte(r.Out), &p))
	var got []string
	for _, st := range p.Steps {
		got = append(got, st.To+" "+st.Edge)
	}
	assert.Equal(t, []string{"etcdoperator.v0.9.2-clusterwide replaces", "etcdoperator.v0.9.4-clusterwide replaces"}, got)

	r = o.Run("alpha", "upgrade-path", filepath.Join(dir, "node-healthcheck-operator.semver.db"), "--package", "node-healthcheck-operator", "--channel", "stable", "--from", "0.3.0", "--to", "0.5.0")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `OLM installs node-healthcheck-operator.v0.6.1 (skipRange ">=0.1.0 <0.6.1") instead: it is nearer the channel head`)
}

// TestDocExamples runs every example of docs/upgrade-graph.md (a text
// block after an "upgrade-path example" comment: the command line, then
// its stdout) on the example catalog and compares the output.
func TestDocExamples(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("../../../../docs/upgrade-graph.md")
	require.NoError(t, err)
	parts := strings.Split(string(raw), "<!-- upgrade-path example -->\n```text\n")
	require.Len(t, parts, 5, "four examples")
	o := cmdtest.New(t)
	for _, p := range parts[1:] {
		block, _, ok := strings.Cut(p, "```\n")
		require.True(t, ok)
		cmdLine, want, _ := strings.Cut(block, "\n")
		args := shellWords(t, strings.TrimPrefix(cmdLine, "$ opm "))
		for i, a := range args {
			if a == "catalog/" {
				args[i] = demo
			}
		}
		r := o.Run(args...)
		assert.Equal(t, want, r.Out, cmdLine)
		assert.Empty(t, r.ErrOut, cmdLine)
	}
}

// shellWords splits a command line of the docs: words by spaces, single
// quotes kept together.
func shellWords(t *testing.T, s string) []string {
	var out []string
	var cur strings.Builder
	quoted, inWord := false, false
	for _, r := range s {
		switch {
		case r == '\'':
			quoted, inWord = !quoted, true
		case r == ' ' && !quoted:
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quoted {
		t.Fatalf("unbalanced quote in %q", s)
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// A channel OLM v0 cannot order is the catalog's fault: exit 1, naming
// the heads.
func TestUpgradePathTwoHeads(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "catalog.json"), []byte(`{"schema":"olm.package","name":"x","defaultChannel":"s"}
{"schema":"olm.channel","package":"x","name":"s","entries":[{"name":"x.v1"},{"name":"x.v2","replaces":"x.v1"},{"name":"x.v3","replaces":"x.v1"}]}
{"schema":"olm.bundle","name":"x.v1","package":"x","image":"r/x:1","properties":[{"type":"olm.package","value":{"packageName":"x","version":"1.0.0"}}]}
{"schema":"olm.bundle","name":"x.v2","package":"x","image":"r/x:2","properties":[{"type":"olm.package","value":{"packageName":"x","version":"2.0.0"}}]}
{"schema":"olm.bundle","name":"x.v3","package":"x","image":"r/x:3","properties":[{"type":"olm.package","value":{"packageName":"x","version":"3.0.0"}}]}
`), 0o644))
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", dir, "--package", "x", "--from", "x.v1")
	assert.Equal(t, exit.Failed, r.Code)
	assert.Contains(t, r.ErrOut, "package x: channel s has 2 heads (x.v2, x.v3); OLM v0 needs one replaces chain to order a channel")
	r = o.Run("alpha", "upgrade-path", dir, "--package", "x", "--from", "x.v1", "--olmv1")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, " 1. x.v3 (3.0.0)  replaces x.v1\n")
}

// TestUpgradePathFromNowhere (issue 36, item 6): a --from version no
// bundle has and nothing upgrades from (above the head) exits 1 naming the
// nearest versions; --package can be left out of a one-package catalog
// and not of a catalog of several; reached is right without --to.
func TestUpgradePathFromNowhere(t *testing.T) {
	t.Parallel()
	dir := shareddata.Require(t, "reference", "index")
	db := filepath.Join(dir, "etcd.replaces.db")
	o := cmdtest.New(t)
	r := o.Run("alpha", "upgrade-path", db, "--from", "9.9.9")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "package etcd: no bundle has version 9.9.9 and no entry upgrades from it")
	assert.Contains(t, r.ErrOut, "the highest version in channel singlenamespace-alpha is 0.9.4")
	r = o.Run("alpha", "upgrade-path", db, "--from", "0.9.1")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "the nearest versions in channel singlenamespace-alpha are 0.9.0 (below) and 0.9.2 (above)")

	r = o.Run("alpha", "upgrade-path", db, "--from", "0.9.0", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var p graph.Path
	require.NoError(t, json.Unmarshal([]byte(r.Out), &p))
	assert.Equal(t, "etcd", p.Package)
	assert.True(t, p.AtHead)
	assert.True(t, p.Reached)

	// A version below every bundle that a skipRange covers is a start.
	r = o.Run("alpha", "upgrade-path", filepath.Join(dir, "node-healthcheck-operator.semver.db"), "--channel", "stable", "--from", "0.1.0")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)

	two := t.TempDir()
	data, err := os.ReadFile(filepath.Join(dir, "etcd.replaces.fbc.json"))
	require.NoError(t, err)
	more, err := os.ReadFile(filepath.Join(dir, "pelorus-operator.replaces.fbc.json"))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(two, "catalog.json"), append(append(data, '\n'), more...), 0o644))
	r = o.Run("alpha", "upgrade-path", two, "--from", "0.9.0")
	assert.Equal(t, exit.UpstreamUsage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "the catalog has 2 packages (etcd, pelorus-operator): say which with --package")
}
