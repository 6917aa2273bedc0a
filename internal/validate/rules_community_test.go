package validate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/bundle"
)

var community = Options{Select: []string{SetCommunity}}

// setCSV rewrites the fixture's CSV with the fields given (dotted path:
// value; nil deletes the field).
func setCSV(t *testing.T, m fstest.MapFS, fields map[string]any) {
	t.Helper()
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(m[csvFile].Data, &doc))
	for path, v := range fields {
		keys := strings.Split(path, ".")
		cur := doc
		for _, k := range keys[:len(keys)-1] {
			next, ok := cur[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				cur[k] = next
			}
			cur = next
		}
		if v == nil {
			delete(cur, keys[len(keys)-1])
		} else {
			cur[keys[len(keys)-1]] = v
		}
	}
	data, err := yaml.Marshal(doc)
	require.NoError(t, err)
	m[csvFile].Data = data
}

// TestCommunityRequiredFields pins the verdicts of operator-pipelines'
// test_required_fields (all missing, all invalid, all valid) and
// test_metadata_container_image_validation, rebuilt on testdata/gates.
func TestCommunityRequiredFields(t *testing.T) {
	t.Parallel()
	// field: severity the pipelines give it (failure: error, warning).
	sev := map[string]Severity{
		"metadata.annotations.capabilities": Warning, "metadata.annotations.categories": Warning,
		"metadata.annotations.containerImage": Warning, "metadata.annotations.createdAt": Warning,
		"metadata.annotations.repository": Warning, "metadata.annotations.support": Warning,
		"metadata.annotations.description": Warning, "spec.displayName": Error, "spec.description": Error,
		"spec.icon": Error, "spec.version": Error, "spec.maintainers": Error, "spec.provider.name": Error,
		"spec.links": Error, "spec.keywords": Warning,
	}
	verdicts := func(t *testing.T, fields map[string]any) map[string]Finding {
		m := gatesFS(t)
		setCSV(t, m, fields)
		got := map[string]Finding{}
		for _, f := range check(t, m, community).Findings {
			if f.Rule == RuleCommunityRequiredFields.ID {
				got[f.Field] = f
			}
		}
		return got
	}
	t.Run("all missing", func(t *testing.T) {
		fields := map[string]any{}
		for f := range sev {
			fields[f] = nil
		}
		got := verdicts(t, fields)
		for f, s := range sev {
			require.Contains(t, got, f)
			assert.Equal(t, s, got[f].Severity, f)
			assert.Contains(t, got[f].Message, "does not set", f)
			assert.NotZero(t, got[f].Line, f)
		}
	})
	t.Run("all invalid", func(t *testing.T) {
		fields := map[string]any{}
		for f := range sev {
			fields[f] = ""
		}
		got := verdicts(t, fields)
		for f, s := range sev {
			require.Contains(t, got, f)
			assert.Equal(t, s, got[f].Severity, f)
			assert.Contains(t, got[f].Message, "is not valid", f)
			assert.NotZero(t, got[f].Line, f)
		}
	})
	t.Run("all valid", func(t *testing.T) {
		got := verdicts(t, map[string]any{
			"metadata.annotations.capabilities":   "Basic Install",
			"metadata.annotations.categories":     "Storage,Security",
			"metadata.annotations.containerImage": "example.com/foo/bar:tag",
			"metadata.annotations.createdAt":      "2023-08-15T12:00:00Z",
			"metadata.annotations.repository":     "https://example.com/foo/bar.git",
			"metadata.annotations.support":        "Accusamus quidem quam enim dolor.",
			"metadata.annotations.description":    "Accusamus quidem quam enim dolor.",
			"spec.displayName":                    "Accusamus quidem quam enim dolor.",
			"spec.description":                    "Accusamus quidem quam enim dolor.",
			"spec.icon":                           []any{map[string]any{"base64data": "Zm9v", "mediatype": "image/svg+xml"}},
			"spec.version":                        "1.2.0",
			"spec.maintainers":                    []any{map[string]any{"name": "John Doe", "email": "jdoe@example.com"}},
			"spec.provider.name":                  "ACME Corp.",
			"spec.links":                          []any{map[string]any{"name": "example", "url": "https://example.com/"}},
			"spec.keywords":                       []any{"foo", "bar"},
		})
		assert.Empty(t, got)
	})
	for img, ok := range map[string]bool{
		"example/bar:tag": true, "example.com/test/nested_namesapce/foo/bar:tag": true,
		"example.com/foo/bar:tag": true, "example.com/f~oo:tag": true, "example.com/f~oo": false,
	} {
		got := verdicts(t, map[string]any{"metadata.annotations.containerImage": img})
		_, bad := got["metadata.annotations.containerImage"]
		assert.Equal(t, !ok, bad, img)
	}
	// Deliberate difference: the pipelines match displayName's length from
	// the start only, so a 51-character name passes there.
	got := verdicts(t, map[string]any{"spec.displayName": strings.Repeat("w", 51)})
	assert.Contains(t, got, "spec.displayName")
	// A category of operator-framework/api's list that the pipelines' lacks.
	got = verdicts(t, map[string]any{"metadata.annotations.categories": "Observability"})
	assert.Contains(t, got, "metadata.annotations.categories")
}

// layout writes the gates fixture, edited, to root/operators/<name>/<version>.
func layout(t *testing.T, root, name, version string, m fstest.MapFS) string {
	t.Helper()
	dir := filepath.Join(root, "operators", name, version)
	for p, f := range m {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, p), f.Data, 0o644))
	}
	return dir
}

func checkDir(t *testing.T, dir string, opts Options) BundleReport {
	t.Helper()
	b, err := bundle.Load(os.DirFS(dir))
	return Check(dir, b, err, opts)
}

func TestCommunityBundleRules(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	// The fixture passes, laid out as the community repositories are.
	assert.Empty(t, checkDir(t, layout(t, root, "widget-operator", "1.2.0", gatesFS(t)), community).Findings)

	dir := layout(t, root, "widgets", "1.2", gatesFS(t))
	rep := checkDir(t, dir, community)
	assert.Equal(t, []string{RuleCommunityOperatorName.ID, RuleCommunityVersionDir.ID}, rulesOf(rep))
	f := byField(rep, RuleCommunityVersionDir.ID)["spec.version"]
	assert.Contains(t, f.Message, `directory is "1.2" but its spec.version is "1.2.0"`)
	assert.Equal(t, csvFile, f.File)
	assert.NotZero(t, f.Line)
	f = byField(rep, RuleCommunityOperatorName.ID)[`annotations["operators.operatorframework.io.bundle.package.v1"]`]
	assert.Contains(t, f.Message, `the package "widget-operator" is not the operator's directory name "widgets"`)
	assert.Equal(t, annFile, f.File)
	assert.NotZero(t, f.Line)
	// Outside that layout, directories are not judged.
	assert.Empty(t, check(t, gatesFS(t), community).Findings)

	m := gatesFS(t)
	edit(t, m, csvFile, "name: widget-operator.v1.2.0", "name: widgets.v1.2.0")
	f = byField(check(t, m, community), RuleCommunityOperatorName.ID)["metadata.name"]
	assert.Contains(t, f.Message, `CSV name "widgets.v1.2.0" does not start with the operator name "widget-operator"`)
	// Issue 36: the fixture replaces an earlier CSV, so it is published
	// under its name; renaming it would cut the upgrades: the hint says
	// keep it. The first version of an operator may still be renamed.
	assert.Equal(t, Warning, f.Severity)
	assert.Contains(t, f.Hint, "keep the name")
	assert.NotContains(t, f.Hint, "name the CSV widget-operator.v1.2.0")
	edit(t, m, csvFile, "  replaces: widget-operator.v1.1.0\n", "")
	edit(t, m, csvFile, `    olm.skipRange: ">=1.0.0 <1.2.0"`+"\n", "")
	f = byField(check(t, m, community), RuleCommunityOperatorName.ID)["metadata.name"]
	assert.Contains(t, f.Hint, "a new operator: name the CSV widget-operator.v1.2.0")

	// check_network_policy_presence: a NetworkPolicy is refused; another
	// group's kind of that name is not.
	m = gatesFS(t)
	m["manifests/allow.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: allow-metrics\nspec:\n  podSelector: {}\n")}
	f = byField(check(t, m, community), RuleCommunityNetworkPolicy.ID)["kind"]
	assert.Contains(t, f.Message, "ships a NetworkPolicy (allow-metrics)")
	assert.Equal(t, "manifests/allow.yaml", f.File)
	assert.Equal(t, 2, f.Line)
	assert.Equal(t, Error, f.Severity)
	m["manifests/allow.yaml"].Data = []byte("apiVersion: example.com/v1\nkind: NetworkPolicy\nmetadata:\n  name: allow-metrics\n")
	assert.Empty(t, byField(check(t, m, community), RuleCommunityNetworkPolicy.ID))
}

// pkgBundle is one bundle of a package test: a version, what it replaces,
// its skipRange, its channels and its operator name.
type pkgBundle struct{ version, replaces, skipRange, channels, name string }

// checkPackageOf validates the bundles together, laid out as
// operators/hello/<version>, and returns each version's findings of the
// community package rules.
func checkPackageOf(t *testing.T, bundles []pkgBundle) map[string][]Finding {
	t.Helper()
	root := t.TempDir()
	var inputs []Input
	for _, b := range bundles {
		m := gatesFS(t)
		name := b.name
		if name == "" {
			name = "hello"
		}
		setCSV(t, m, map[string]any{
			"metadata.name": name + ".v" + b.version, "spec.version": b.version,
			"spec.replaces": nilIfEmpty(b.replaces),
		})
		var doc map[string]any
		require.NoError(t, yaml.Unmarshal(m[csvFile].Data, &doc))
		ann := doc["metadata"].(map[string]any)["annotations"].(map[string]any)
		if b.skipRange == "" {
			delete(ann, "olm.skipRange")
		} else {
			ann["olm.skipRange"] = b.skipRange
		}
		data, err := yaml.Marshal(doc)
		require.NoError(t, err)
		m[csvFile].Data = data
		ch := b.channels
		if ch == "" {
			ch = "beta"
		}
		edit(t, m, annFile, "package.v1: widget-operator", "package.v1: hello")
		edit(t, m, annFile, "channels.v1: stable,fast", "channels.v1: "+ch)
		edit(t, m, annFile, "default.v1: stable", "default.v1: "+strings.Split(ch, ",")[0])
		inputs = append(inputs, DirInput(layout(t, root, "hello", b.version, m), bundle.LoadOptions{}))
	}
	out := map[string][]Finding{}
	Stream(t.Context(), inputs, community, func(p PackageReport) {
		for _, rep := range p.Bundles {
			for _, f := range rep.Findings {
				if r, _ := Lookup(f.Rule); r.Scope == ScopePackage {
					v := filepath.Base(rep.Path)
					out[v] = append(out[v], f)
				}
			}
		}
	})
	return out
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// TestCommunityPackageRules pins the verdicts of operator-pipelines'
// test_check_dangling_bundles, test_check_upgrade_graph_loop and
// test_check_operator_name_unique, rebuilt as bundle directories given
// together.
func TestCommunityPackageRules(t *testing.T) {
	t.Parallel()
	rules := func(fs []Finding) []string {
		var out []string
		for _, f := range fs {
			out = append(out, f.Rule)
		}
		return out
	}
	// A chain: no finding.
	got := checkPackageOf(t, []pkgBundle{{version: "0.0.1"}, {version: "0.0.2", replaces: "hello.v0.0.1"}, {version: "0.0.3", replaces: "hello.v0.0.2"}})
	assert.Empty(t, got)
	// 0.0.2 is replaced by nothing and is not the channel head.
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.1"}, {version: "0.0.2", replaces: "hello.v0.0.1"}, {version: "0.0.3", replaces: "hello.v0.0.1"}})
	require.Len(t, got["0.0.2"], 1, "%v", got)
	assert.Equal(t, RuleCommunityDangling.ID, got["0.0.2"][0].Rule)
	assert.Contains(t, got["0.0.2"][0].Message, "dangling bundle in channel beta")
	assert.NotZero(t, got["0.0.2"][0].Line)
	assert.Len(t, got, 1)
	// A skip range reaches it: not dangling.
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.1"}, {version: "0.0.2", replaces: "hello.v0.0.1"}, {version: "0.0.3", replaces: "hello.v0.0.1", skipRange: ">=0.0.2 <0.0.3"}})
	assert.Empty(t, got)
	// A loop: 0.0.1 -> 0.0.2 -> 0.0.3 -> 0.0.2 (0.0.2 replaces 0.0.3 too,
	// through skips in the pipelines' case; here through a skip range).
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.1"}, {version: "0.0.2", replaces: "hello.v0.0.1", skipRange: ">=0.0.3 <0.0.4"}, {version: "0.0.3", replaces: "hello.v0.0.2"}})
	var loop []string
	for _, fs := range got {
		loop = append(loop, rules(fs)...)
	}
	assert.Contains(t, loop, RuleCommunityLoop.ID)
	// replaces names no given bundle, or itself.
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.2", replaces: "hello.v0.0.1"}, {version: "0.0.3", replaces: "hello.v0.0.3"}})
	assert.ElementsMatch(t, []string{RuleCommunityReplaces.ID, RuleCommunityDangling.ID}, rules(got["0.0.2"]))
	for _, f := range got["0.0.2"] {
		if f.Rule == RuleCommunityReplaces.ID {
			assert.Contains(t, f.Message, "replaces hello.v0.0.1, a version no bundle given for package hello has (given: 0.0.2, 0.0.3)")
			assert.Equal(t, "spec.replaces", f.Field)
			assert.NotZero(t, f.Line)
		}
	}
	assert.Equal(t, []string{RuleCommunityReplaces.ID}, rules(got["0.0.3"]))
	assert.Contains(t, got["0.0.3"][0].Message, "replaces itself")
	// Two operator names in one package.
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.1"}, {version: "0.0.2", replaces: "hello.v0.0.1"}, {version: "0.0.3", replaces: "hello.v0.0.2", name: "howdy"}})
	require.Contains(t, rules(got["0.0.3"]), RuleCommunityOneName.ID)
	assert.Empty(t, got["0.0.1"])
	// skipRange without replaces cuts the chain of older bundles.
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.1"}, {version: "0.0.2", skipRange: "<0.0.2"}})
	assert.Equal(t, []string{RuleCommunitySkipRangePrune.ID}, rules(got["0.0.2"]))
	assert.Equal(t, Warning, got["0.0.2"][0].Severity)
	assert.Contains(t, got["0.0.2"][0].Message, "older bundles (hello.v0.0.1)")
	// Channels are judged apart: a bundle only in alpha is alpha's head.
	got = checkPackageOf(t, []pkgBundle{{version: "0.0.1", channels: "beta,alpha"}, {version: "0.0.2", replaces: "hello.v0.0.1", channels: "beta"}})
	assert.Empty(t, got)
}
