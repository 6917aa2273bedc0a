package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/version"
)

// Fixtures at the repository root.
const (
	validBundle  = "../../testdata/bundles/valid"
	syntaxBundle = "../../testdata/bundles/syntax-error"
	csvDir       = "../../testdata/csv"
)

// isolate keeps the developer's environment and config file out of a test.
// Tests that call it must not run in parallel (t.Setenv).
func isolate(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("HOME", dir)
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm-256color")
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "OPM_") {
			t.Setenv(k, "")
		}
	}
}

type result struct {
	code        int
	out, errOut string
}

// opm runs the real command tree with buffers for streams.
func opm(t *testing.T, args ...string) result {
	t.Helper()
	s, _, out, errOut := TestStreams()
	code := run(args, s)
	return result{code, out.String(), errOut.String()}
}

// opmTTY runs opm as if stderr were a terminal.
func opmTTY(t *testing.T, args ...string) result {
	t.Helper()
	s, _, out, errOut := TestStreams()
	s.ErrTTY, s.OutTTY = true, true
	code := run(args, s)
	return result{code, out.String(), errOut.String()}
}

func TestRootHelpAndUnknownCommand(t *testing.T) {
	isolate(t)
	r := opm(t)
	assert.Equal(t, exitOK, r.code)
	assert.Contains(t, r.out, "bundle")

	r = opm(t, "frobnicate")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, "unknown command")
}

func TestVersion(t *testing.T) {
	isolate(t)
	old := [3]string{version.Version, version.Commit, version.Date}
	t.Cleanup(func() { version.Version, version.Commit, version.Date = old[0], old[1], old[2] })
	version.Version, version.Commit, version.Date = "v1.2.3", "abc1234", "2026-01-02T03:04:05Z"

	r := opm(t, "version")
	require.Equal(t, exitOK, r.code, r.errOut)
	for _, want := range []string{"opm v1.2.3", "abc1234", "2026-01-02T03:04:05Z", "go1.", "/"} {
		assert.Contains(t, r.out, want)
	}

	r = opm(t, "version", "-o", "json")
	require.Equal(t, exitOK, r.code, r.errOut)
	var got map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.out), &got), r.out)
	assert.Equal(t, "v1.2.3", got["version"])
	assert.Equal(t, "abc1234", got["commit"])
	assert.Equal(t, "2026-01-02T03:04:05Z", got["date"])
	assert.NotEmpty(t, got["goVersion"])
	assert.NotEmpty(t, got["platform"])

	r = opm(t, "version", "-o", "yaml")
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, `invalid --output "yaml"`)
}

func TestBundleValidateValid(t *testing.T) {
	isolate(t)
	r := opm(t, "bundle", "validate", validBundle)
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Empty(t, r.out, "text output goes to stderr")
	assert.Contains(t, r.errOut, "✓ "+validBundle+" (example-operator.v0.1.0)")
	assert.Contains(t, r.errOut, "1 bundle, 0 errors, 0 warnings, 0 infos — passed")

	r = opm(t, "bundle", "validate", "-o", "json", validBundle)
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Empty(t, r.errOut)
	assert.JSONEq(t, `{"passed": true, "bundles": [{"path": "`+validBundle+`", "name": "example-operator.v0.1.0", "findings": []}]}`, r.out)
}

// decodeReport checks the -o json document's shape strictly and returns it.
func decodeReport(t *testing.T, data string) map[string]any {
	t.Helper()
	var doc map[string]any
	dec := json.NewDecoder(strings.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&doc), data)
	require.ElementsMatch(t, []string{"passed", "bundles"}, keys(doc))
	require.IsType(t, true, doc["passed"])
	bundles, ok := doc["bundles"].([]any)
	require.True(t, ok, "bundles is an array")
	for _, b := range bundles {
		bm := b.(map[string]any)
		require.ElementsMatch(t, []string{"path", "name", "findings"}, keys(bm))
		require.IsType(t, "", bm["path"])
		require.IsType(t, "", bm["name"])
		findings, ok := bm["findings"].([]any)
		require.True(t, ok, "findings is an array, never null: %v", bm["findings"])
		for _, f := range findings {
			fm := f.(map[string]any)
			require.ElementsMatch(t, []string{"rule", "severity", "file", "line", "field", "message", "hint"}, keys(fm))
			require.Contains(t, []any{"error", "warning", "info"}, fm["severity"])
			require.IsType(t, json.Number(""), fm["line"])
			for _, k := range []string{"rule", "file", "field", "message", "hint"} {
				require.IsType(t, "", fm[k], k)
			}
		}
	}
	return doc
}

func keys(m map[string]any) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}

// findings returns the findings of the i-th bundle of a decoded report.
func findings(doc map[string]any, i int) []map[string]any {
	var out []map[string]any
	for _, f := range doc["bundles"].([]any)[i].(map[string]any)["findings"].([]any) {
		out = append(out, f.(map[string]any))
	}
	return out
}

func rulesOf(fs []map[string]any) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f["rule"].(string))
	}
	return out
}

func TestBundleValidateSyntaxErrorJSON(t *testing.T) {
	isolate(t)
	r := opm(t, "bundle", "validate", "-o", "json", validBundle, syntaxBundle)
	require.Equal(t, exitFailed, r.code, r.errOut)
	assert.Empty(t, r.errOut, "json mode writes nothing to stderr")
	doc := decodeReport(t, r.out)
	assert.Equal(t, false, doc["passed"])
	bundles := doc["bundles"].([]any)
	require.Len(t, bundles, 2, "reports keep the order of the arguments")
	assert.Equal(t, validBundle, bundles[0].(map[string]any)["path"])
	assert.Equal(t, syntaxBundle, bundles[1].(map[string]any)["path"])
	assert.Equal(t, "example-operator.v0.2.0", bundles[1].(map[string]any)["name"])

	var syntax map[string]any
	for _, f := range findings(doc, 1) {
		if f["rule"] == "yaml-syntax" {
			syntax = f
		}
	}
	require.NotNil(t, syntax, "the syntax error is reported as such: %v", rulesOf(findings(doc, 1)))
	assert.Equal(t, "error", syntax["severity"])
	assert.Equal(t, "manifests/widgets.example.com.crd.yaml", syntax["file"])
	assert.NotEqual(t, "0", syntax["line"].(json.Number).String(), "the line of the syntax error is known")
	assert.NotEmpty(t, syntax["hint"])
}

func TestBundleValidateSyntaxErrorText(t *testing.T) {
	isolate(t)
	r := opm(t, "bundle", "validate", syntaxBundle)
	require.Equal(t, exitFailed, r.code)
	assert.Empty(t, r.out, "text output goes to stderr")
	assert.Contains(t, r.errOut, "✗ "+syntaxBundle+" (example-operator.v0.2.0)")
	assert.Contains(t, r.errOut, "\n  manifests/widgets.example.com.crd.yaml\n", "findings grouped under their file")
	assert.Regexp(t, `\n    error +yaml-syntax +manifests/widgets\.example\.com\.crd\.yaml:\d+\n +syntax error: .+\n +hint: .+\n`, r.errOut)
	assert.Regexp(t, `1 bundle, \d+ errors?, \d+ warnings?, \d+ infos? — failed\n$`, r.errOut)
}

func TestBundleValidateSelectSkip(t *testing.T) {
	isolate(t)
	r := opm(t, "bundle", "validate", "-o", "json", "--select", "yaml-syntax", syntaxBundle)
	require.Equal(t, exitFailed, r.code, r.errOut)
	doc := decodeReport(t, r.out)
	fs := findings(doc, 0)
	require.NotEmpty(t, fs)
	for _, f := range fs {
		assert.Equal(t, "yaml-syntax", f["rule"])
	}

	r = opm(t, "bundle", "validate", "-o", "json", "--skip", "yaml-syntax", syntaxBundle)
	doc = decodeReport(t, r.out)
	assert.NotContains(t, rulesOf(findings(doc, 0)), "yaml-syntax")

	// Comma-separated and repeated forms; selecting a rule that finds
	// nothing passes.
	r = opm(t, "bundle", "validate", "-o", "json", "--select", "bundle-no-csv,bundle-load", "--select", "bundle-multiple-csvs", syntaxBundle)
	require.Equal(t, exitOK, r.code, r.out+r.errOut)
	assert.Empty(t, findings(decodeReport(t, r.out), 0))
}

func TestBundleValidateUsageErrors(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown rule", []string{"--select", "yaml-syntx", validBundle}, `did you mean "yaml-syntax"`},
		{"unknown skipped rule", []string{"--skip", "bundle-no-cvs", validBundle}, `did you mean "bundle-no-csv"`},
		{"missing path", []string{validBundle, "testdata/does-not-exist"}, "testdata/does-not-exist: no such directory"},
		{"file, not directory", []string{csvDir + "/not-a-csv.yaml"}, "not a directory"},
		{"no path", nil, "no bundle given"},
		{"bad fail-on", []string{"--fail-on", "fatal", validBundle}, `invalid --fail-on "fatal"`},
		{"bad output", []string{"-o", "xml", validBundle}, `invalid --output "xml"`},
		{"bad k8s version", []string{"--k8s-version", "latest", validBundle}, `invalid --k8s-version "latest"`},
		{"unknown flag", []string{"--frobnicate", validBundle}, "unknown flag: --frobnicate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := opm(t, append([]string{"bundle", "validate"}, tc.args...)...)
			assert.Equal(t, exitUsage, r.code)
			assert.Contains(t, r.errOut, "error: ")
			assert.Contains(t, r.errOut, tc.want)
			assert.Empty(t, r.out)
		})
	}
}

func TestBundleValidateUnreadableDir(t *testing.T) {
	isolate(t)
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	r := opm(t, "bundle", "validate", dir)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, "permission denied")
}

func TestBundleValidateNotABundle(t *testing.T) {
	isolate(t)
	// A directory that holds no bundle is a finding, not a usage error: it
	// may be what a glob matched.
	r := opm(t, "bundle", "validate", "-o", "json", t.TempDir())
	require.Equal(t, exitFailed, r.code, r.errOut)
	assert.Contains(t, rulesOf(findings(decodeReport(t, r.out), 0)), "bundle-no-csv")
}

// A package directory with version subdirectories is not expanded: it is
// reported as one input that is not a bundle.
func TestBundleValidatePackageDirNotExpanded(t *testing.T) {
	isolate(t)
	pkg := t.TempDir()
	copyDir(t, validBundle, filepath.Join(pkg, "0.1.0"))
	copyDir(t, validBundle, filepath.Join(pkg, "0.1.1"))
	r := opm(t, "bundle", "validate", "-o", "json", pkg)
	require.Equal(t, exitFailed, r.code, r.errOut)
	doc := decodeReport(t, r.out)
	require.Len(t, doc["bundles"], 1)
}

func TestBundleValidateManyBundles(t *testing.T) {
	isolate(t)
	root := t.TempDir()
	var args []string
	for i := range 181 {
		dir := filepath.Join(root, "example", "0.1."+strconv.Itoa(i))
		copyDir(t, validBundle, dir)
		args = append(args, dir)
	}
	r := opm(t, append([]string{"bundle", "validate", "-o", "json", "--select", "yaml-syntax,bundle-no-csv,bundle-load,bundle-multiple-csvs"}, args...)...)
	require.Equal(t, exitOK, r.code, r.errOut)
	doc := decodeReport(t, r.out)
	require.Len(t, doc["bundles"], 181)
	for i := range 181 {
		b := doc["bundles"].([]any)[i].(map[string]any)
		assert.Equal(t, args[i], b["path"])
		assert.Equal(t, "example-operator.v0.1.0", b["name"])
	}

	r = opm(t, append([]string{"bundle", "validate", "--select", "yaml-syntax"}, args...)...)
	require.Equal(t, exitOK, r.code)
	assert.Contains(t, r.errOut, "181 bundles, 0 errors, 0 warnings, 0 infos — passed")
}

// The real corpus, when ../shared is there: every bundle loads.
func TestBundleValidateCorpus(t *testing.T) {
	isolate(t)
	dirs, _ := filepath.Glob("../../../shared/corpus/real/*/*")
	var args []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			args = append(args, d)
		}
	}
	if len(args) == 0 {
		t.Skip("no ../shared/corpus")
	}
	r := opm(t, append([]string{"bundle", "validate", "-o", "json"}, args...)...)
	require.Contains(t, []int{exitOK, exitFailed}, r.code, r.errOut)
	doc := decodeReport(t, r.out)
	require.Len(t, doc["bundles"], len(args))
	for i := range args {
		for _, f := range findings(doc, i) {
			assert.NotContains(t, []string{"bundle-load", "bundle-no-csv"}, f["rule"], "%s: %v", args[i], f["message"])
		}
	}
}

func TestListRules(t *testing.T) {
	isolate(t)
	r := opm(t, "bundle", "validate", "--list-rules")
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Regexp(t, `(?m)^RULE +SEVERITY +SCOPE +CHECKS$`, r.out)
	assert.Regexp(t, `(?m)^yaml-syntax +error +csv +\S`, r.out)

	r = opm(t, "bundle", "validate", "--list-rules", "-o", "json")
	require.Equal(t, exitOK, r.code, r.errOut)
	var rules []map[string]string
	require.NoError(t, json.Unmarshal([]byte(r.out), &rules))
	var ids []string
	for _, rule := range rules {
		ids = append(ids, rule["id"])
		assert.NotEmpty(t, rule["severity"])
		assert.NotEmpty(t, rule["scope"])
		assert.NotEmpty(t, rule["what"])
	}
	assert.Contains(t, ids, "bundle-no-csv")
}

func TestColor(t *testing.T) {
	isolate(t)
	// On a terminal, severities are coloured.
	r := opmTTY(t, "bundle", "validate", syntaxBundle)
	require.Equal(t, exitFailed, r.code)
	assert.Contains(t, r.errOut, "\x1b[", "colour on a terminal")

	// Not on a terminal: plain text.
	r = opm(t, "bundle", "validate", syntaxBundle)
	assert.NotContains(t, r.errOut, "\x1b")

	// NO_COLOR wins over the terminal.
	t.Setenv("NO_COLOR", "1")
	r = opmTTY(t, "bundle", "validate", syntaxBundle)
	assert.NotContains(t, r.errOut, "\x1b")
	r = opmTTY(t, "bundle", "validate", "--select", "nope", syntaxBundle)
	assert.Equal(t, exitUsage, r.code)
	assert.NotContains(t, r.errOut, "\x1b")
	assert.Contains(t, r.errOut, "error: ")

	// JSON never carries escapes.
	t.Setenv("NO_COLOR", "")
	r = opmTTY(t, "bundle", "validate", "-o", "json", syntaxBundle)
	assert.NotContains(t, r.out, "\x1b")
}

func TestEnvAndConfigPrecedence(t *testing.T) {
	isolate(t)
	cfgDir := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "opm")
	require.NoError(t, os.MkdirAll(cfgDir, 0o755))
	cfg := filepath.Join(cfgDir, "config.yaml")

	// The default config file is read.
	require.NoError(t, os.WriteFile(cfg, []byte("fail-on: nonsense\n"), 0o644))
	r := opm(t, "bundle", "validate", validBundle)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, `invalid --fail-on "nonsense" (from fail-on in `+cfg+`)`)

	// The environment wins over the config file.
	t.Setenv("OPM_FAIL_ON", "alsononsense")
	r = opm(t, "bundle", "validate", validBundle)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, `invalid --fail-on "alsononsense" (from OPM_FAIL_ON)`)

	// The flag wins over both.
	r = opm(t, "bundle", "validate", "--fail-on", "warning", validBundle)
	assert.Equal(t, exitOK, r.code, r.errOut)
	assert.Contains(t, r.errOut, "(failing on warnings and above)")

	// A valid value from the environment applies.
	t.Setenv("OPM_FAIL_ON", "warning")
	r = opm(t, "bundle", "validate", validBundle)
	assert.Equal(t, exitOK, r.code, r.errOut)
	assert.Contains(t, r.errOut, "(failing on warnings and above)")
	t.Setenv("OPM_FAIL_ON", "")

	// Lists, and keys under the command, which win over top-level ones.
	require.NoError(t, os.WriteFile(cfg, []byte("select: [bundle-no-csv]\nbundle:\n  validate:\n    select: [yaml-syntax]\n    output: json\n"), 0o644))
	r = opm(t, "bundle", "validate", syntaxBundle)
	require.Equal(t, exitFailed, r.code, r.errOut)
	doc := decodeReport(t, r.out)
	fs := findings(doc, 0)
	require.NotEmpty(t, fs)
	for _, f := range fs {
		assert.Equal(t, "yaml-syntax", f["rule"])
	}
	// OPM_SELECT replaces the configured list.
	t.Setenv("OPM_SELECT", "bundle-no-csv")
	r = opm(t, "bundle", "validate", syntaxBundle)
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Empty(t, findings(decodeReport(t, r.out), 0))
	t.Setenv("OPM_SELECT", "")

	// An explicit --config must exist; OPM_CONFIG too.
	r = opm(t, "--config", filepath.Join(cfgDir, "missing.yaml"), "bundle", "validate", validBundle)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, "missing.yaml (from --config): no such file")
	t.Setenv("OPM_CONFIG", filepath.Join(cfgDir, "missing.yaml"))
	r = opm(t, "bundle", "validate", validBundle)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, "(from OPM_CONFIG)")
	t.Setenv("OPM_CONFIG", "")

	// --config names another file, which replaces the default one.
	other := filepath.Join(t.TempDir(), "opm.yaml")
	require.NoError(t, os.WriteFile(other, []byte("output: json\n"), 0o644))
	r = opm(t, "bundle", "validate", "--config", other, validBundle)
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.JSONEq(t, `{"passed": true, "bundles": [{"path": "`+validBundle+`", "name": "example-operator.v0.1.0", "findings": []}]}`, r.out)

	// A config file that does not parse is a usage error.
	require.NoError(t, os.WriteFile(other, []byte("output: [json\n"), 0o644))
	r = opm(t, "bundle", "validate", "--config", other, validBundle)
	assert.Equal(t, exitUsage, r.code)
	assert.Contains(t, r.errOut, other)
}

func TestMissingDefaultConfigIsFine(t *testing.T) {
	isolate(t)
	t.Setenv("XDG_CONFIG_HOME", "")
	t.Setenv("HOME", t.TempDir())
	r := opm(t, "version")
	assert.Equal(t, exitOK, r.code, r.errOut)
	assert.Equal(t, filepath.Join(os.Getenv("HOME"), ".config", "opm", "config.yaml"), defaultConfigFile())
}

func TestCSVLint(t *testing.T) {
	isolate(t)
	standalone := csvDir + "/example-operator.clusterserviceversion.yaml"
	inBundle := syntaxBundle + "/manifests/example-operator.clusterserviceversion.yaml"

	// A lone CSV: bundle rules skipped, and opm says so once.
	r := opm(t, "csv", "lint", standalone)
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.Empty(t, r.out)
	assert.Equal(t, 1, strings.Count(r.errOut, "note: "))
	assert.Contains(t, r.errOut, "note: "+standalone+" is not inside a bundle's manifests/ directory: bundle-level rules")
	assert.Contains(t, r.errOut, "1 file, 0 errors, 0 warnings, 0 infos — passed")

	// Several files, one JSON entry per file, in order, path as given.
	files := []string{standalone, csvDir + "/syntax-error.clusterserviceversion.yaml", csvDir + "/not-a-csv.yaml", inBundle}
	r = opm(t, append([]string{"csv", "lint", "-o", "json"}, files...)...)
	require.Equal(t, exitFailed, r.code, r.errOut)
	assert.Empty(t, r.errOut, "no note in json mode")
	doc := decodeReport(t, r.out)
	bundles := doc["bundles"].([]any)
	require.Len(t, bundles, len(files))
	for i, f := range files {
		assert.Equal(t, f, bundles[i].(map[string]any)["path"])
	}
	assert.Equal(t, "example-operator.v0.1.0", bundles[0].(map[string]any)["name"])
	assert.Empty(t, findings(doc, 0))

	syntax := findings(doc, 1)
	require.Len(t, syntax, 1)
	assert.Equal(t, "yaml-syntax", syntax[0]["rule"])
	assert.Equal(t, files[1], syntax[0]["file"])
	assert.NotEqual(t, "0", syntax[0]["line"].(json.Number).String())

	assert.Equal(t, []string{"bundle-no-csv"}, rulesOf(findings(doc, 2)))

	// In a bundle: checked with the bundle, but only the CSV file's
	// findings are kept (the CRD's syntax error is not), named as given.
	assert.Equal(t, "example-operator.v0.2.0", bundles[3].(map[string]any)["name"])
	for _, f := range findings(doc, 3) {
		assert.Equal(t, inBundle, f["file"])
		assert.NotEqual(t, "yaml-syntax", f["rule"])
	}

	// Text mode for the in-bundle file mentions the file that did not parse.
	r = opm(t, "csv", "lint", inBundle)
	assert.Contains(t, r.errOut, "manifests/widgets.example.com.crd.yaml did not parse")
	assert.NotContains(t, r.errOut, "not inside a bundle's manifests/")

	// The CSV of a valid bundle is clean.
	r = opm(t, "csv", "lint", validBundle+"/manifests/example-operator.clusterserviceversion.yaml")
	require.Equal(t, exitOK, r.code, r.errOut)
	assert.NotContains(t, r.errOut, "note:")
}

func TestCSVLintUsageErrors(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "requires at least 1 arg"},
		{"missing file", []string{"nope.yaml"}, "nope.yaml: no such file"},
		{"directory", []string{validBundle}, "is a directory"},
		{"unknown rule", []string{"--skip", "yaml-syntaks", csvDir + "/not-a-csv.yaml"}, `did you mean "yaml-syntax"`},
		{"bad fail-on", []string{"--fail-on", "x", csvDir + "/not-a-csv.yaml"}, `invalid --fail-on "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := opm(t, append([]string{"csv", "lint"}, tc.args...)...)
			assert.Equal(t, exitUsage, r.code)
			assert.Contains(t, r.errOut, tc.want)
		})
	}
}

func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o644)
	}))
}
