package validate_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"context"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/image"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"

	"github.com/opmkit/opm/internal/shareddata"
)

const (
	validBundle  = "../../../../testdata/bundles/valid"
	syntaxBundle = "../../../../testdata/bundles/syntax-error"
	csvDir       = "../../../../testdata/csv"
)

func TestBundleValidateValid(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, r.Out, "text output goes to stderr")
	assert.Contains(t, r.ErrOut, "✓ "+validBundle+" (example-operator.v0.1.0)")
	assert.Contains(t, r.ErrOut, "1 bundle, 0 errors, 0 warnings, 0 infos — passed")

	r = o.Run("bundle", "validate", "-o", "json", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut)
	assert.JSONEq(t, `{"passed": true, "bundles": [{"path": "`+validBundle+`", "name": "example-operator.v0.1.0", "findings": []}]}`, r.Out)
}

func TestBundleValidateSyntaxErrorJSON(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "-o", "json", validBundle, syntaxBundle)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut, "json mode writes nothing to stderr")
	doc := cmdtest.DecodeReport(t, r.Out)
	assert.Equal(t, false, doc["passed"])
	bundles := doc["bundles"].([]any)
	require.Len(t, bundles, 2, "reports keep the order of the arguments")
	assert.Equal(t, validBundle, bundles[0].(map[string]any)["path"])
	assert.Equal(t, syntaxBundle, bundles[1].(map[string]any)["path"])
	assert.Equal(t, "example-operator.v0.2.0", bundles[1].(map[string]any)["name"])

	var syntax map[string]any
	for _, f := range cmdtest.Findings(doc, 1) {
		if f["rule"] == "yaml-syntax" {
			syntax = f
		}
	}
	require.NotNil(t, syntax, "the syntax error is reported as such: %v", cmdtest.RulesOf(cmdtest.Findings(doc, 1)))
	assert.Equal(t, "error", syntax["severity"])
	assert.Equal(t, "manifests/widgets.example.com.crd.yaml", syntax["file"])
	assert.NotEqual(t, "0", syntax["line"].(json.Number).String(), "the line of the syntax error is known")
	assert.NotEmpty(t, syntax["hint"])
}

func TestBundleValidateSyntaxErrorText(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", syntaxBundle)
	require.Equal(t, exit.Failed, r.Code)
	assert.Empty(t, r.Out, "text output goes to stderr")
	assert.Contains(t, r.ErrOut, "✗ "+syntaxBundle+" (example-operator.v0.2.0)")
	assert.Contains(t, r.ErrOut, "\n  manifests/widgets.example.com.crd.yaml\n", "findings grouped under their file")
	assert.Regexp(t, `\n    error +yaml-syntax +manifests/widgets\.example\.com\.crd\.yaml:\d+\n +syntax error: .+\n +hint: .+\n`, r.ErrOut)
	assert.Regexp(t, `1 bundle, \d+ errors?, \d+ warnings?, \d+ infos? — failed\n$`, r.ErrOut)
}

func TestBundleValidateSelectSkip(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "-o", "json", "--select", "yaml-syntax", syntaxBundle)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	fs := cmdtest.Findings(doc, 0)
	require.NotEmpty(t, fs)
	for _, f := range fs {
		assert.Equal(t, "yaml-syntax", f["rule"])
	}

	r = o.Run("bundle", "validate", "-o", "json", "--skip", "yaml-syntax", syntaxBundle)
	doc = cmdtest.DecodeReport(t, r.Out)
	assert.NotContains(t, cmdtest.RulesOf(cmdtest.Findings(doc, 0)), "yaml-syntax")

	// Comma-separated and repeated forms; selecting a rule that finds
	// nothing passes.
	r = o.Run("bundle", "validate", "-o", "json", "--select", "bundle-no-csv,bundle-load", "--select", "bundle-multiple-csvs", syntaxBundle)
	require.Equal(t, exit.OK, r.Code, r.Out+r.ErrOut)
	assert.Empty(t, cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0))
}

func TestBundleValidateUsageErrors(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
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
		{"bad ocp version", []string{"--ocp-version", "4", validBundle}, `invalid --ocp-version "4"`},
		{"missing categories file", []string{"--categories", "testdata/no-such.json", validBundle}, "custom categories: open testdata/no-such.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := o.Run(append([]string{"bundle", "validate"}, tc.args...)...)
			assert.Equal(t, exit.Usage, r.Code)
			assert.Contains(t, r.ErrOut, "error: ")
			assert.Contains(t, r.ErrOut, tc.want)
			assert.Empty(t, r.Out)
		})
	}
}

// The gates' fixture (internal/validate/testdata/gates) passes both
// publishing gates; custom categories come from --categories or, as for
// operator-sdk, the file OPERATOR_BUNDLE_CATEGORIES names.
func TestBundleValidateGates(t *testing.T) {
	t.Parallel()
	const gates = "../../../validate/testdata/gates"
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "--select", "default,operatorhub,openshift,preflight,community,conforma", "--fail-on", "warning", gates)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)

	custom := filepath.Join(t.TempDir(), "categories.json")
	require.NoError(t, os.WriteFile(custom, []byte(`{"categories": ["Gadgets"]}`), 0o644))
	r = o.Run("bundle", "validate", "--select", "operatorhub", "--categories", custom, "-o", "json", gates)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `category \"Developer Tools\" is not one of the custom (--categories) categories`)

	env := cmdtest.New(t)
	env.Env["OPERATOR_BUNDLE_CATEGORIES"] = custom
	r = env.Run("bundle", "validate", "--select", "operatorhub", "-o", "json", gates)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "operatorhub-categories")

	require.NoError(t, os.WriteFile(custom, []byte(`{"categories": "Gadgets"}`), 0o644))
	r = o.Run("bundle", "validate", "--select", "operatorhub", "--categories", custom, gates)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, `want {"categories": ["Database", ...]}`)

	// The community recipe: the fixture laid out as the community
	// repositories are passes; under another version directory it fails.
	for version, code := range map[string]int{"1.2.0": exit.OK, "1.2": exit.Failed} {
		dir := filepath.Join(t.TempDir(), "operators", "widget-operator", version)
		require.NoError(t, os.CopyFS(dir, os.DirFS(gates)))
		r = o.Run("bundle", "validate", "--select", "default,operatorhub,community", "--fail-on", "warning", dir)
		assert.Equal(t, code, r.Code, r.ErrOut)
	}

	// --ocp-version judges one release: 4.19 is past the fixture's range.
	r = o.Run("bundle", "validate", "--select", "openshift", "--ocp-version", "v4.19", "-o", "json", gates)
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "--ocp-version 4.19 is outside the bundle's range (4.14 to 4.18)")
}

func TestBundleValidateUnreadableDir(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	if os.Geteuid() == 0 {
		t.Skip("root reads any directory")
	}
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0))
	t.Cleanup(func() { _ = os.Chmod(dir, 0o755) })
	r := o.Run("bundle", "validate", dir)
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "permission denied")
}

func TestBundleValidateNotABundle(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	// A directory that holds no bundle is a finding, not a usage error: it
	// may be what a glob matched.
	r := o.Run("bundle", "validate", "-o", "json", t.TempDir())
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Contains(t, cmdtest.RulesOf(cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)), "bundle-no-csv")
}

// A package directory with version subdirectories is not expanded: it is
// reported as one input that is not a bundle.
func TestBundleValidatePackageDirNotExpanded(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	pkg := t.TempDir()
	cmdtest.CopyDir(t, validBundle, filepath.Join(pkg, "0.1.0"))
	cmdtest.CopyDir(t, validBundle, filepath.Join(pkg, "0.1.1"))
	r := o.Run("bundle", "validate", "-o", "json", pkg)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	require.Len(t, doc["bundles"], 1)
}

func TestBundleValidateManyBundles(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	root := t.TempDir()
	var args []string
	for i := range 181 {
		dir := filepath.Join(root, "example", "0.1."+strconv.Itoa(i))
		cmdtest.CopyDir(t, validBundle, dir)
		args = append(args, dir)
	}
	r := o.Run(append([]string{"bundle", "validate", "-o", "json", "--select", "yaml-syntax,bundle-no-csv,bundle-load,bundle-multiple-csvs"}, args...)...)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	require.Len(t, doc["bundles"], 181)
	for i := range 181 {
		b := doc["bundles"].([]any)[i].(map[string]any)
		assert.Equal(t, args[i], b["path"])
		assert.Equal(t, "example-operator.v0.1.0", b["name"])
	}

	r = o.Run(append([]string{"bundle", "validate", "--select", "yaml-syntax"}, args...)...)
	require.Equal(t, exit.OK, r.Code)
	assert.Contains(t, r.ErrOut, "181 bundles, 0 errors, 0 warnings, 0 infos — passed")
}

// Text output comes package by package (each printed once its bundles are
// done), while -o json keeps the arguments' order; bundles of one package
// given apart are still compared (package-duplicate-csv).
func TestBundleValidateTextByPackage(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	root := t.TempDir()
	bundleOf := func(pkg, ver string) string {
		dir := filepath.Join(root, pkg, ver)
		cmdtest.CopyDir(t, validBundle, dir)
		file := filepath.Join(dir, "metadata", "annotations.yaml")
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(data), "package.v1: example-operator", "package.v1: "+pkg, 1)), 0o644))
		return dir
	}
	a1, b1, a2 := bundleOf("alpha", "1"), bundleOf("beta", "1"), bundleOf("alpha", "2")
	args := []string{"bundle", "validate", "--select", "package-duplicate-csv", a1, b1, a2}

	r := o.Run(args...)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	ia1, ib1, ia2 := strings.Index(r.ErrOut, "✗ "+a1+" "), strings.Index(r.ErrOut, "✓ "+b1+" "), strings.Index(r.ErrOut, "✗ "+a2+" ")
	require.True(t, ia1 >= 0 && ib1 >= 0 && ia2 >= 0, r.ErrOut)
	assert.Less(t, ia1, ia2, "alpha's bundles in the order given")
	assert.Less(t, ia2, ib1, "alpha, whose first bundle came first, is printed whole before beta")
	assert.Contains(t, r.ErrOut, "is also used by "+a2+" in package alpha")
	assert.Contains(t, r.ErrOut, "3 bundles, 2 errors, 0 warnings, 0 infos — failed")

	r = o.Run(append([]string{"bundle", "validate", "-o", "json", "--select", "package-duplicate-csv"}, a1, b1, a2)...)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	for i, want := range []string{a1, b1, a2} {
		assert.Equal(t, want, doc["bundles"].([]any)[i].(map[string]any)["path"])
	}
	assert.Len(t, cmdtest.Findings(doc, 1), 0)
	assert.Len(t, cmdtest.Findings(doc, 2), 1)
}

// The real corpus, when ../shared is there: every bundle loads.
func TestBundleValidateCorpus(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dirs, _ := filepath.Glob(filepath.Join(shareddata.Require(t, "corpus", "real"), "*", "*"))
	var args []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			args = append(args, d)
		}
	}
	require.NotEmpty(t, args, "../shared/corpus/real holds no bundle directories")
	r := o.Run(append([]string{"bundle", "validate", "-o", "json"}, args...)...)
	require.Contains(t, []int{exit.OK, exit.Failed}, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	require.Len(t, doc["bundles"], len(args))
	for i := range args {
		for _, f := range cmdtest.Findings(doc, i) {
			assert.NotContains(t, []string{"bundle-load", "bundle-no-csv"}, f["rule"], "%s: %v", args[i], f["message"])
		}
	}
}

func TestListRules(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "--list-rules")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Regexp(t, `(?m)^RULE +SEVERITY +SCOPE +SET +CHECKS$`, r.Out)
	assert.Regexp(t, `(?m)^yaml-syntax +error +csv +default,operatorhub,openshift,preflight,community,conforma +\S`, r.Out)
	assert.Regexp(t, `(?m)^olmv1-all-namespaces +error +csv +olmv1 +\S`, r.Out)
	assert.Regexp(t, `(?m)^image-pinned +warning +csv +supply-chain +\S`, r.Out)
	assert.Regexp(t, `(?m)^operatorhub-icon +error +csv +operatorhub +\S`, r.Out)
	assert.Regexp(t, `(?m)^openshift-versions +error +bundle +openshift +\S`, r.Out)
	assert.Regexp(t, `(?m)^csv-version +error +csv +default,operatorhub,conforma +\S`, r.Out)

	r = o.Run("bundle", "validate", "--list-rules", "-o", "json")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	var rules []struct {
		ID, Severity, Scope, Set, What string
		AlsoIn                         []string
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rules))
	var ids []string
	also := map[string][]string{}
	for _, rule := range rules {
		ids = append(ids, rule.ID)
		assert.NotEmpty(t, rule.Severity)
		assert.NotEmpty(t, rule.Scope)
		assert.Contains(t, []string{"default", "olmv1", "supply-chain", "operatorhub", "openshift", "preflight", "community", "conforma"}, rule.Set)
		assert.NotEmpty(t, rule.What)
		also[rule.ID] = rule.AlsoIn
	}
	assert.Contains(t, ids, "bundle-no-csv")
	assert.Equal(t, []string{"operatorhub"}, also["k8s-removed-api"])
}

// writeImage writes the valid bundle as an image with these labels.
func writeImage(t *testing.T, ref string, labels map[string]string) {
	t.Helper()
	img, err := image.BuildBundleImage(os.DirFS(validBundle), labels)
	require.NoError(t, err)
	c, err := image.NewClient(image.Options{})
	require.NoError(t, err)
	r, err := image.ParseReference(ref)
	require.NoError(t, err)
	_, err = c.Write(context.Background(), img, r)
	require.NoError(t, err)
}

func validAnnotations(t *testing.T) map[string]string {
	t.Helper()
	b, err := bundle.LoadDir(validBundle)
	require.NoError(t, err)
	return b.Annotations.Values
}

func TestBundleValidateImageLabelMismatch(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	labels := validAnnotations(t)
	labels[bundle.AnnotationPackage] = "other-operator"
	ref := "oci:" + filepath.Join(t.TempDir(), "layout") + ":1"
	writeImage(t, ref, labels)

	r := o.Run("bundle", "validate", "-o", "json", ref)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	fs := cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)
	require.Equal(t, []string{"image-labels"}, cmdtest.RulesOf(fs))
	assert.Equal(t, "metadata/annotations.yaml", fs[0]["file"])
	assert.Contains(t, fs[0]["message"], `"other-operator"`)
	assert.Contains(t, fs[0]["message"], `"example-operator"`)

	// The directory has no labels to compare.
	assert.Empty(t, validateFindings(t, validBundle))
}

func TestBundleValidateArguments(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()

	// A mistyped path is not sent to a registry.
	r := o.Run("bundle", "validate", "bundles/etcd")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "bundles/etcd: no such directory, and not an image reference")

	// An image that cannot be opened is reported, and is an I/O error.
	missing := "oci:" + filepath.Join(dir, "nope") + ":1"
	r = o.Run("bundle", "validate", "-o", "json", missing, validBundle)
	assert.Equal(t, exit.Usage, r.Code)
	doc := cmdtest.DecodeReport(t, r.Out)
	assert.Equal(t, []string{"bundle-load"}, cmdtest.RulesOf(cmdtest.Findings(doc, 0)))
	assert.Empty(t, cmdtest.Findings(doc, 1))
	assert.Contains(t, r.ErrOut, "1 image could not be opened")
}

func TestBundleValidateImageProgress(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	dir := t.TempDir()
	var refs []string
	for _, tag := range []string{"a", "b", "c"} {
		ref := "oci:" + filepath.Join(dir, "layout") + ":" + tag
		writeImage(t, ref, validAnnotations(t))
		refs = append(refs, ref)
	}
	// On a terminal: a count on one line, erased before the report. The
	// three are one CSV thrice, so the package rules complain.
	r := o.RunTTY(append([]string{"bundle", "validate"}, refs...)...)
	assert.Contains(t, r.ErrOut, "pulled 3/3")
	assert.Contains(t, r.ErrOut, "\r\033[K")
	assert.Contains(t, r.ErrOut, "3 bundles")

	// Not on a terminal: nothing but the report.
	r = o.Run(append([]string{"bundle", "validate"}, refs...)...)
	assert.NotContains(t, r.ErrOut, "pulled")
	assert.False(t, strings.Contains(r.ErrOut, "\r"))

	// A directory alone shows no progress either.
	r = o.RunTTY("bundle", "validate", validBundle)
	assert.NotContains(t, r.ErrOut, "pulled")
}

func TestBundleValidateFromFiles(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	// Paths relative to the working directory: runs are child processes.
	o.Dir = t.TempDir()
	cmdtest.CopyDir(t, validBundle, filepath.Join(o.Dir, "good"))
	cmdtest.CopyDir(t, syntaxBundle, filepath.Join(o.Dir, "bad"))

	r := o.Run("bundle", "validate", "--from-files", "good/manifests/example-operator.clusterserviceversion.yaml", "notes.txt")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "good")

	r = o.Run("bundle", "validate", "--from-files", "-o", "json",
		"good/metadata/annotations.yaml", "bad/manifests/widgets.example.com.crd.yaml")
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	var rep struct {
		Passed  bool
		Bundles []struct{ Path string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &rep), r.Out)
	require.Len(t, rep.Bundles, 2)
	assert.Equal(t, "good", rep.Bundles[0].Path)
	assert.Equal(t, "bad", rep.Bundles[1].Path)

	r = o.Run("bundle", "validate", "--from-files", "README.md", "docs/x.md")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, "the 2 files given are in no bundle directory")

	r = o.Run("bundle", "validate", "--from-files", "-o", "json", "README.md")
	assert.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.JSONEq(t, `{"passed": true, "bundles": []}`, r.Out)

	// The environment does not turn --from-files on.
	o.Env["OPM_FROM_FILES"] = "true"
	r = o.Run("bundle", "validate", "good/manifests/example-operator.clusterserviceversion.yaml")
	assert.Equal(t, exit.Usage, r.Code)
}

// validateFindings validates args (one bundle) and returns its findings.
func validateFindings(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	r := cmdtest.Run(t, append([]string{"bundle", "validate", "-o", "json"}, args...)...)
	require.Contains(t, []int{exit.OK, exit.Failed}, r.Code, r.ErrOut)
	doc := cmdtest.DecodeReport(t, r.Out)
	require.Len(t, doc["bundles"], 1)
	return cmdtest.Findings(doc, 0)
}

// -o sarif: a SARIF 2.1.0 log on stdout with each rule's help page, and
// nothing on stderr; --list-rules has no SARIF form.
func TestBundleValidateSARIF(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	r := o.Run("bundle", "validate", "-o", "sarif", syntaxBundle)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut)
	var log struct {
		Schema string `json:"$schema"`
		Runs   []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID      string `json:"id"`
						HelpURI string `json:"helpUri"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID string `json:"ruleId"`
				Level  string `json:"level"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &log), r.Out)
	require.Len(t, log.Runs, 1)
	require.NotEmpty(t, log.Runs[0].Results)
	var rules []string
	for _, res := range log.Runs[0].Results {
		rules = append(rules, res.RuleID)
		assert.Contains(t, []string{"error", "warning", "note"}, res.Level)
	}
	assert.Contains(t, rules, "yaml-syntax")
	require.NotEmpty(t, log.Runs[0].Tool.Driver.Rules)
	rule := log.Runs[0].Tool.Driver.Rules[0]
	assert.Equal(t, "https://github.com/opmkit/opm/blob/main/docs/validation.md#"+rule.ID, rule.HelpURI)

	r = o.Run("bundle", "validate", "-o", "sarif", validBundle)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, `"results": []`)

	r = o.Run("bundle", "validate", "--list-rules", "-o", "sarif")
	assert.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, "--list-rules prints text or json")
}
