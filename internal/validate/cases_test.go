package validate

import (
	"io/fs"
	"os"
	"path"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

// caseFS is testdata/valid with the files of testdata/cases/NAME laid over
// it: each case fixture holds only the files it changes.
func caseFS(t testing.TB, name string) fstest.MapFS {
	t.Helper()
	m := validFS(t)
	root := path.Join("testdata/cases", name)
	n := 0
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path.Join(root, p))
		m[p] = &fstest.MapFile{Data: data}
		n++
		return err
	})
	require.NoError(t, err)
	require.NotZero(t, n, "fixture %s is empty", root)
	return m
}

func findingsOf(rep BundleReport, rule string) []Finding {
	var out []Finding
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f)
		}
	}
	return out
}

func lineOf(t testing.TB, m fstest.MapFS, file, text string) int {
	t.Helper()
	data := string(m[file].Data)
	i := indexOf(data, text)
	require.GreaterOrEqual(t, i, 0, "%s lacks %q", file, text)
	n := 1
	for _, c := range data[:i] {
		if c == '\n' {
			n++
		}
	}
	return n
}

func indexOf(s, sub string) int {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return i
		}
	}
	return -1
}

func TestMergeKeyOverrideIsNotADuplicate(t *testing.T) {
	m := caseFS(t, "merge-key-override")
	rep := check(t, m, Options{})
	assert.Empty(t, findingsOf(rep, "yaml-duplicate-key"), "a key after <<: *anchor overrides it")
	b, err := bundle.Load(m)
	require.NoError(t, err)
	var sel map[string]any
	for _, o := range b.Objects {
		if o.Kind == "Service" {
			sel = bundle.MapAt(o.Map(), "spec", "selector")
		}
	}
	assert.Equal(t, map[string]any{"app": "widget-operator", "tier": "metrics"}, sel, "the explicit key wins over the merged one")
}

func TestDefaultChannelAbsentWithSeveralChannels(t *testing.T) {
	m := caseFS(t, "default-channel-absent")
	rep := check(t, m, Options{})
	got := findingsOf(rep, "annotations-default-channel")
	require.Len(t, got, 1)
	assert.Equal(t, Warning, got[0].Severity, "the annotation is optional")
	assert.Contains(t, got[0].Message, `the first listed, "fast"`)
	for _, f := range rep.Findings {
		assert.NotEqual(t, Error, f.Severity, "no error: %+v", f)
	}
}

func TestVendorAnnotationBoolIsNotAnError(t *testing.T) {
	m := caseFS(t, "annotation-bool")
	rep := check(t, m, Options{})
	assert.Empty(t, findingsOf(rep, "annotations-required"), "%+v", rep.Findings)

	// A key OLM reads still must be a string, and the message names the type.
	edit(t, m, annFile, "package.v1: widget-operator", "package.v1: true")
	got := findingsOf(check(t, m, Options{}), "annotations-required")
	require.NotEmpty(t, got)
	assert.Contains(t, got[0].Message, "is a boolean, not a string")
}

func TestUnknownDottedKeyPointsAtItsLine(t *testing.T) {
	m := caseFS(t, "unknown-dotted-key")
	got := findingsOf(check(t, m, Options{}), "csv-unknown-field")
	require.Len(t, got, 1)
	assert.Equal(t, `spec["com.redhat.openshift.versions"]`, got[0].Field)
	assert.Contains(t, got[0].Message, `spec["com.redhat.openshift.versions"]`)
	assert.Equal(t, lineOf(t, m, csvFile, "com.redhat.openshift.versions"), got[0].Line)
}

func TestCSVNameTwiceIsAnError(t *testing.T) {
	m := caseFS(t, "csv-name-twice")
	rep := check(t, m, Options{})
	got := findingsOf(rep, "yaml-duplicate-key")
	require.Len(t, got, 1)
	assert.Equal(t, Error, got[0].Severity)
	assert.Equal(t, "metadata.name", got[0].Field)
	assert.Contains(t, got[0].Message, `"widget-operator.v1.3.0"`)
	assert.Equal(t, lineOf(t, m, csvFile, "name: widget-operator.v1.3.0"), got[0].Line)

	// Elsewhere a duplicate key stays a warning.
	m = validFS(t)
	edit(t, m, crdFile, "  scope: Namespaced", "  scope: Namespaced\n  scope: Namespaced")
	got = findingsOf(check(t, m, Options{}), "yaml-duplicate-key")
	require.Len(t, got, 1)
	assert.Equal(t, Warning, got[0].Severity)
	assert.Equal(t, "spec.scope", got[0].Field)
}

// TestIndexRefusals: every fixture OLM cannot install is refused by
// CheckForIndex with the rule id bundle validate gives it.
func TestIndexRefusals(t *testing.T) {
	cases := []struct{ fixture, rule, field string }{
		{"install-list", "csv-field-type", "spec.install"},
		{"owned-not-list", "csv-field-type", "spec.customresourcedefinitions.owned"},
		{"package-bidi", "annotations-package", `annotations["operators.operatorframework.io.bundle.package.v1"]`},
		{"package-homoglyph", "annotations-package", `annotations["operators.operatorframework.io.bundle.package.v1"]`},
	}
	for _, tc := range cases {
		t.Run(tc.fixture, func(t *testing.T) {
			m := caseFS(t, tc.fixture)
			b, err := bundle.Load(m)
			full := Check("fixture", b, err, Options{})
			v := findingsOf(full, tc.rule)
			require.NotEmpty(t, v, "bundle validate: %+v", full.Findings)
			assert.Equal(t, Error, v[0].Severity)
			assert.Equal(t, tc.field, v[0].Field)

			rep := CheckForIndex("fixture", b, err)
			refused := rep.Err()
			require.Error(t, refused)
			var re *RefusedError
			require.ErrorAs(t, refused, &re)
			assert.Contains(t, re.Rules(), tc.rule)
			assert.Contains(t, refused.Error(), tc.rule+": ")
		})
	}
	// The valid bundle and the verdict fixtures that are fine go in.
	for _, name := range []string{"csv-name-twice", "merge-key-override", "default-channel-absent", "annotation-bool", "unknown-dotted-key"} {
		m := caseFS(t, name)
		b, err := bundle.Load(m)
		assert.NoError(t, CheckForIndex(name, b, err).Err(), name)
	}
}

// TestIndexAdmitsWhatOLMInstalls: findings that bundle validate reports but
// that neither OLM nor upstream opm refuses do not keep a bundle out of an
// index. A CSV under operators.coreos.com/v1 (published packages such as
// percona-server-mysql-operator ship them) is found by its kind and read as
// v1alpha1; a metadata.name given twice is read as its last value by
// Kubernetes, OLM, upstream and opm alike.
func TestIndexAdmitsWhatOLMInstalls(t *testing.T) {
	cases := []struct {
		name, rule string
		sev        Severity
		fs         func(t *testing.T) fstest.MapFS
	}{
		{"csv-v1", "csv-api-version", Warning, func(t *testing.T) fstest.MapFS {
			m := validFS(t)
			edit(t, m, csvFile, "apiVersion: operators.coreos.com/v1alpha1", "apiVersion: operators.coreos.com/v1")
			return m
		}},
		{"csv-name-twice", "yaml-duplicate-key", Error, func(t *testing.T) fstest.MapFS { return caseFS(t, "csv-name-twice") }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.fs(t)
			b, err := bundle.Load(m)
			require.NoError(t, err)
			require.NotNil(t, b.CSV)
			got := findingsOf(Check("fixture", b, nil, Options{}), tc.rule)
			require.NotEmpty(t, got, "bundle validate still says so")
			assert.Equal(t, tc.sev, got[0].Severity)
			assert.NoError(t, CheckForIndex("fixture", b, nil).Err())
		})
	}
}

// messageCase: a fixture, the rule that must report it, text its message
// must hold (and must not), and the line it must point at (0: any).
type messageCase struct {
	fixture, rule, want, not string
	file                     string
	lineOf                   string // text on the line the finding must point at
}

func TestMisleadingMessages(t *testing.T) {
	const svc = "manifests/widget-operator-metrics.service.yaml"
	cases := []messageCase{
		{fixture: "annotations-empty", rule: "annotations-missing", want: "metadata/annotations.yaml is empty", not: "missing", file: annFile},
		{fixture: "service-miscased", rule: "manifest-object", want: `mis-cased key "ApiVersion"`, not: "object has no", file: svc},
		{fixture: "csv-miscased", rule: "manifest-object", want: `mis-cased key "ApiVersion"`, not: "object has no", file: csvFile},
		{fixture: "nul-byte", rule: "yaml-syntax", want: "NUL (U+0000) at column", file: svc, lineOf: "- name: met"},
		{fixture: "latin1", rule: "yaml-syntax", want: "byte 0xe9 at column 6 is not UTF-8", file: svc, lineOf: "# Caf"},
		{fixture: "csv-types", rule: "csv-field-type", want: "metadata.name is a number (123), not a string", file: csvFile, lineOf: "name: 123"},
		{fixture: "csv-types", rule: "csv-field-type", want: "spec.version is a mapping, not a string", file: csvFile, lineOf: "version:\n    major"},
	}
	for _, tc := range cases {
		t.Run(tc.fixture+"/"+tc.rule, func(t *testing.T) {
			m := caseFS(t, tc.fixture)
			rep := check(t, m, Options{})
			var f *Finding
			for _, g := range findingsOf(rep, tc.rule) {
				if indexOf(g.Message, tc.want) >= 0 {
					f = &g
				}
			}
			require.NotNil(t, f, "no %s finding saying %q: %+v", tc.rule, tc.want, rep.Findings)
			if tc.not != "" {
				assert.NotContains(t, f.Message, tc.not)
			}
			assert.Equal(t, tc.file, f.File)
			if tc.lineOf != "" {
				assert.Equal(t, lineOf(t, m, tc.file, tc.lineOf), f.Line)
			}
			assert.NotEmpty(t, f.Hint)
		})
	}
	// A wrong type is said once, by csv-field-type, never as "empty" or
	// "missing" by the field's own rule.
	rep := check(t, caseFS(t, "csv-types"), Options{})
	assert.Empty(t, findingsOf(rep, "csv-name"), "%+v", rep.Findings)
	assert.Empty(t, findingsOf(rep, "csv-version"), "%+v", rep.Findings)
}

func TestFindingsPointAtTheKeyKubernetesKeeps(t *testing.T) {
	m := caseFS(t, "csv-name-twice")
	got := findingsOf(check(t, m, Options{}), "csv-name-convention")
	require.Len(t, got, 1)
	assert.Contains(t, got[0].Message, "widget-operator.v1.3.0")
	assert.Equal(t, lineOf(t, m, csvFile, "name: widget-operator.v1.3.0"), got[0].Line, "the line of the value the message quotes")
}

// TestUnsupportedKindIsAnError: a registry+v1 bundle carrying a Deployment
// in manifests/ is refused, naming the kind and the file, as upstream does;
// the kinds OLM installs (a Service here) pass.
func TestUnsupportedKindIsAnError(t *testing.T) {
	m := caseFS(t, "unsupported-kind")
	got := findingsOf(check(t, m, Options{}), "manifest-supported-kind")
	require.Len(t, got, 1, "only the Deployment")
	assert.Equal(t, Error, got[0].Severity)
	assert.Equal(t, "manifests/widget-operator.deployment.yaml", got[0].File)
	assert.Equal(t, "kind", got[0].Field)
	assert.Equal(t, 2, got[0].Line)
	assert.Contains(t, got[0].Message, `Deployment "widget-operator"`)
	assert.Contains(t, got[0].Hint, "spec.install.spec.deployments")

	// Under another media type the rule does not apply.
	edit(t, m, annFile, "mediatype.v1: registry+v1", "mediatype.v1: plain")
	assert.Empty(t, findingsOf(check(t, m, Options{}), "manifest-supported-kind"))
}
