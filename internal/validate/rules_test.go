package validate

import (
	"context"
	"io/fs"
	"os"
	"path"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

const (
	csvFile = "manifests/widget-operator.clusterserviceversion.yaml"
	crdFile = "manifests/widgets.example.com.crd.yaml"
	annFile = "metadata/annotations.yaml"
)

// validFS reads testdata/valid, a bundle with no findings at all.
func validFS(t testing.TB) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	root := "testdata/valid"
	err := fs.WalkDir(os.DirFS(root), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path.Join(root, p))
		m[p] = &fstest.MapFile{Data: data}
		return err
	})
	require.NoError(t, err)
	return m
}

// edit replaces old by new in file, failing when old is absent so that a
// fixture change cannot silently turn a case into a no-op.
func edit(t testing.TB, m fstest.MapFS, file, old, new string) {
	t.Helper()
	f, ok := m[file]
	require.True(t, ok, "no file %s", file)
	require.Contains(t, string(f.Data), old, "fixture %s lacks %q", file, old)
	f.Data = []byte(strings.Replace(string(f.Data), old, new, 1))
}

func check(t testing.TB, m fstest.MapFS, opts Options) BundleReport {
	t.Helper()
	b, err := bundle.Load(m)
	return Check("fixture", b, err, opts)
}

func TestValidFixtureHasNoFindings(t *testing.T) {
	rep := check(t, validFS(t), Options{})
	assert.Empty(t, rep.Findings)
	assert.Equal(t, "widget-operator.v1.2.0", rep.Name)
}

type ruleCase struct {
	name   string
	mutate func(t testing.TB, m fstest.MapFS)
	rule   string
	sev    Severity
	file   string
	field  string
	msg    string // substring of the message
	hint   string // substring of the hint
	opts   Options
}

func replace(file, old, new string) func(testing.TB, fstest.MapFS) {
	return func(t testing.TB, m fstest.MapFS) { edit(t, m, file, old, new) }
}

func TestRules(t *testing.T) {
	cases := []ruleCase{
		{name: "syntax error names file and line", rule: "yaml-syntax", sev: Error, file: crdFile, msg: "syntax error",
			mutate: replace(crdFile, "  scope: Namespaced", "  scope: [Namespaced")},
		{name: "no csv", rule: "bundle-no-csv", sev: Error, msg: "no ClusterServiceVersion",
			mutate: func(t testing.TB, m fstest.MapFS) { delete(m, csvFile) }},
		{name: "two csvs", rule: "bundle-multiple-csvs", sev: Error, msg: "more than one",
			mutate: func(t testing.TB, m fstest.MapFS) { m["manifests/copy.yaml"] = m[csvFile] }},
		{name: "nested bundle", rule: "bundle-nested", sev: Warning, file: "bundle/", msg: "subdirectory bundle/",
			mutate: func(t testing.TB, m fstest.MapFS) {
				moved := fstest.MapFS{}
				for k, v := range m {
					moved["bundle/"+k] = v
					delete(m, k)
				}
				for k, v := range moved {
					m[k] = v
				}
			}},
		{name: "ignored file", rule: "bundle-ignored-file", sev: Info, file: "manifests/README.md",
			mutate: func(t testing.TB, m fstest.MapFS) { m["manifests/README.md"] = &fstest.MapFile{Data: []byte("hi")} }},
		{name: "multi document", rule: "manifest-multi-document", sev: Error, file: "manifests/widget-operator-metrics.service.yaml", msg: "Service second",
			mutate: func(t testing.TB, m fstest.MapFS) {
				f := m["manifests/widget-operator-metrics.service.yaml"]
				f.Data = append(f.Data, []byte("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: second\n")...)
			}},
		{name: "object without apiVersion (real: cluster-aas-operator)", rule: "manifest-object", sev: Error, msg: "no apiVersion",
			mutate: replace("manifests/widget-operator-metrics.service.yaml", "apiVersion: v1\n", "")},
		{name: "ambiguous yes", rule: "yaml-ambiguous-scalar", sev: Warning, file: crdFile, msg: "boolean true",
			mutate: replace(crdFile, "  scope: Namespaced", "  scope: Namespaced\n  foo: yes")},
		{name: "duplicate key", rule: "yaml-duplicate-key", sev: Warning, file: crdFile, msg: `"scope"`,
			mutate: replace(crdFile, "  scope: Namespaced", "  scope: Namespaced\n  scope: Cluster")},
		{name: "annotations missing", rule: "annotations-missing", sev: Error, file: annFile,
			mutate: func(t testing.TB, m fstest.MapFS) { delete(m, annFile) }},
		{name: "annotation key missing", rule: "annotations-required", sev: Error, field: `annotations["operators.operatorframework.io.bundle.mediatype.v1"]`,
			mutate: replace(annFile, "  operators.operatorframework.io.bundle.mediatype.v1: registry+v1\n", "")},
		{name: "annotation not a string", rule: "annotations-required", sev: Error, msg: "not a string",
			mutate: replace(annFile, "package.v1: widget-operator", "package.v1: 12")},
		{name: "mediatype", rule: "annotations-mediatype", sev: Error, msg: `"registry+v2"`,
			mutate: replace(annFile, "registry+v1", "registry+v2")},
		{name: "manifests dir", rule: "annotations-directories", sev: Error, msg: "manifests",
			mutate: replace(annFile, "manifests.v1: manifests/", "manifests.v1: deploy/")},
		{name: "empty package (upstream accepts)", rule: "annotations-package", sev: Error, msg: "empty",
			mutate: replace(annFile, "package.v1: widget-operator", `package.v1: ""`)},
		{name: "empty channels", rule: "annotations-channels", sev: Error, msg: "empty",
			mutate: replace(annFile, "channels.v1: stable,fast", `channels.v1: ""`)},
		{name: "default channel elsewhere (real: infinispan, aqua)", rule: "annotations-default-channel", sev: Error, msg: `"beta" is not one of`, hint: "stable, fast",
			mutate: replace(annFile, "default.v1: stable", "default.v1: beta")},
		{name: "no default with two channels", rule: "annotations-default-channel", sev: Warning, msg: "no default channel",
			mutate: replace(annFile, "  operators.operatorframework.io.bundle.channel.default.v1: stable\n", "")},
		{name: "api version", rule: "csv-api-version", sev: Warning, field: "apiVersion",
			mutate: replace(csvFile, "operators.coreos.com/v1alpha1", "operators.coreos.com/v1")},
		{name: "field type", rule: "csv-field-type", sev: Error, field: "spec.maturity", msg: "spec.maturity is a list, not a string",
			mutate: replace(csvFile, "maturity: stable", "maturity: [stable]")},
		{name: "name not dns", rule: "csv-name", sev: Error, field: "metadata.name",
			mutate: replace(csvFile, "name: widget-operator.v1.2.0", "name: Widget_Operator.v1.2.0")},
		{name: "name too long for a label", rule: "csv-name", sev: Error, msg: "label value",
			mutate: replace(csvFile, "name: widget-operator.v1.2.0", "name: widget-operator-"+strings.Repeat("x", 60)+".v1.2.0")},
		{name: "version with v", rule: "csv-version", sev: Error, msg: "leading v", hint: `"1.2.0"`,
			mutate: replace(csvFile, "version: 1.2.0", "version: v1.2.0")},
		{name: "version not semver", rule: "csv-version", sev: Error, hint: `"1.2.0"`,
			mutate: replace(csvFile, "version: 1.2.0", "version: \"1.2\"")},
		{name: "name convention", rule: "csv-name-convention", sev: Warning, hint: "widget-operator.v1.2.0",
			mutate: replace(csvFile, "name: widget-operator.v1.2.0", "name: widget-operator.v1.2.1")},
		{name: "release not a string", rule: "csv-release-type", sev: Error, hint: `release: "1"`,
			mutate: replace(csvFile, "  version: 1.2.0\n", "  version: 1.2.0\n  release: 1\n")},
		{name: "release leading zero", rule: "csv-release-format", sev: Error, msg: "leading zero", hint: `"1"`,
			mutate: replace(csvFile, "  version: 1.2.0\n", "  version: 1.2.0\n  release: \"01\"\n")},
		{name: "release too long", rule: "csv-release-format", sev: Error, msg: "at most 20",
			mutate: replace(csvFile, "  version: 1.2.0\n", "  version: 1.2.0\n  release: \"a.b.c.d.e.f.g.h.i.j.k\"\n")},
		{name: "release empty identifier", rule: "csv-release-format", sev: Error, msg: "empty identifier",
			mutate: replace(csvFile, "  version: 1.2.0\n", "  version: 1.2.0\n  release: \"1..2\"\n")},
		{name: "release plus", rule: "csv-release-format", sev: Error, msg: "build metadata",
			mutate: replace(csvFile, "  version: 1.2.0\n", "  version: 1.2.0\n  release: \"1+x\"\n")},
		{name: "release name", rule: "csv-release-name", sev: Error, hint: `"widget-operator-v1.2.0-2"`,
			mutate: replace(csvFile, "  version: 1.2.0\n", "  version: 1.2.0\n  release: \"2\"\n")},
		{name: "release with build metadata version", rule: "csv-release-build-metadata", sev: Error, field: "spec.version",
			mutate: func(t testing.TB, m fstest.MapFS) {
				edit(t, m, csvFile, "name: widget-operator.v1.2.0", "name: widget-operator-v1.2.0+b1-2")
				edit(t, m, csvFile, "  version: 1.2.0\n", "  version: 1.2.0+b1\n  release: \"2\"\n")
			}},
		{name: "min kube missing", rule: "csv-min-kube-version-missing", sev: Warning,
			mutate: replace(csvFile, "  minKubeVersion: 1.25.0\n", "")},
		{name: "min kube two parts", rule: "csv-min-kube-version-format", sev: Error, hint: `"1.21.0"`,
			mutate: replace(csvFile, "minKubeVersion: 1.25.0", "minKubeVersion: \"1.21\"")},
		{name: "min kube unquoted number", rule: "csv-min-kube-version-format", sev: Error, msg: "YAML number", hint: `"1.21.0"`,
			mutate: replace(csvFile, "minKubeVersion: 1.25.0", "minKubeVersion: 1.21")},
		{name: "install mode typo (real: percona)", rule: "csv-install-modes", sev: Error, field: "spec.installModes[0].type", msg: "OwnNamespacejl", hint: "did you mean OwnNamespace?",
			mutate: replace(csvFile, "type: OwnNamespace", "type: OwnNamespacejl")},
		{name: "install mode duplicate", rule: "csv-install-modes", sev: Error, msg: "twice",
			mutate: replace(csvFile, "type: MultiNamespace", "type: OwnNamespace")},
		{name: "no install mode supported", rule: "csv-install-modes", sev: Error, msg: "no install mode is supported",
			mutate: func(t testing.TB, m fstest.MapFS) {
				m[csvFile].Data = []byte(strings.ReplaceAll(string(m[csvFile].Data), "supported: true", "supported: false"))
			}},
		{name: "conversion webhook needs AllNamespaces only", rule: "csv-conversion-webhook-install-modes", sev: Error, msg: "also supports OwnNamespace",
			mutate: replace(csvFile, "  install:\n", "  webhookdefinitions:\n  - type: ConversionWebhook\n    generateName: cwidget.example.com\n    deploymentName: widget-operator\n    conversionCRDs: [widgets.example.com]\n  install:\n")},
		{name: "replaces bare version (real: datadog)", rule: "csv-replaces", sev: Error, msg: "bare version", hint: "widget-operator.v1.2.1",
			mutate: replace(csvFile, "replaces: widget-operator.v1.1.0", "replaces: 1.2.1")},
		{name: "skip range unparsable", rule: "csv-skip-range", sev: Error, hint: `">=1.0.0 <1.2.0"`,
			mutate: replace(csvFile, `olm.skipRange: ">=1.0.0 <1.2.0"`, `olm.skipRange: ">=1.0.0, <1.2.0"`)},
		{name: "skip range two-part version", rule: "csv-skip-range", sev: Error, hint: `">=1.0.0 <1.2.0"`,
			mutate: replace(csvFile, `olm.skipRange: ">=1.0.0 <1.2.0"`, `olm.skipRange: ">=1.0 <1.2.0"`)},
		{name: "skip range wildcard", rule: "csv-skip-range", sev: Warning, msg: "wildcard", field: `metadata.annotations["olm.skipRange"]`,
			mutate: replace(csvFile, `olm.skipRange: ">=1.0.0 <1.2.0"`, `olm.skipRange: ">=1.0.x <1.2.0"`)},
		{name: "alm-examples not json", rule: "csv-alm-examples", sev: Error, msg: "not a JSON list",
			mutate: replace(csvFile, `[{"apiVersion"`, `[{apiVersion"`)},
		{name: "alm-examples of an API not owned (operator-sdk agrees)", rule: "csv-alm-examples-api", sev: Error, msg: "does not own",
			mutate: replace(csvFile, `"kind": "Widget"`, `"kind": "Gadget"`)},
		{name: "related image invalid", rule: "csv-related-images", sev: Error, field: "spec.relatedImages[0].image",
			mutate: replace(csvFile, "  - name: operator\n    image: quay.example.com/widgets/operator@sha256:", "  - name: operator\n    image: quay.example.com/Widgets/operator@sha256:")},
		{name: "icon media type", rule: "csv-icon", sev: Warning, msg: "image/bmp",
			mutate: replace(csvFile, "mediatype: image/svg+xml", "mediatype: image/bmp")},
		{name: "maintainer email", rule: "csv-maintainers", sev: Warning, msg: "not a valid address",
			mutate: replace(csvFile, "email: widgets@example.com", "email: widgets-at-example")},
		{name: "link url", rule: "csv-links", sev: Warning, msg: "not an absolute",
			mutate: replace(csvFile, "url: https://example.com/docs", "url: example.com/docs")},
		{name: "olm.properties annotation", rule: "csv-olm-properties-annotation", sev: Warning,
			mutate: replace(csvFile, "    capabilities: Basic Install\n", "    capabilities: Basic Install\n    olm.properties: '[]'\n")},
		{name: "olm.properties annotation with more than maxOpenShiftVersion", rule: "csv-olm-properties-annotation", sev: Warning,
			mutate: replace(csvFile, "    capabilities: Basic Install\n", "    capabilities: Basic Install\n    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.14\"}, {\"type\": \"olm.label\", \"value\": {\"label\": \"x\"}}]'\n")},
		{name: "no deployment", rule: "csv-deployments", sev: Error, msg: "no deployment",
			mutate: func(t testing.TB, m fstest.MapFS) {
				s := string(m[csvFile].Data)
				i := strings.Index(s, "      deployments:")
				j := strings.Index(s, "      clusterPermissions:")
				m[csvFile].Data = []byte(s[:i] + s[j:])
			}},
		{name: "deployment service account without permissions", rule: "csv-service-accounts", sev: Error, msg: `"other"`,
			mutate: replace(csvFile, "serviceAccountName: widget-operator\n              containers", "serviceAccountName: other\n              containers")},
		{name: "service account also in bundle (operator-sdk agrees)", rule: "bundle-service-account-conflict", sev: Error, file: "manifests/sa.yaml",
			mutate: func(t testing.TB, m fstest.MapFS) {
				m["manifests/sa.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: widget-operator\n")}
			}},
		{name: "webhook names missing deployment", rule: "csv-webhooks", sev: Error, field: "spec.webhookdefinitions[0].deploymentName",
			mutate: replace(csvFile, "  install:\n", "  webhookdefinitions:\n  - type: ValidatingAdmissionWebhook\n    generateName: vwidget.example.com\n    deploymentName: nope\n  install:\n")},
		{name: "unknown spec field (real: aqua miniKubeVersion)", rule: "csv-unknown-field", sev: Warning, field: "spec.miniKubeVersion", hint: "minKubeVersion",
			mutate: replace(csvFile, "  maturity: stable\n", "  maturity: stable\n  miniKubeVersion: 1.2.0\n")},
		{name: "owned crd name", rule: "csv-owned-crds", sev: Error, msg: "not <plural>.<group>",
			mutate: replace(csvFile, "    - name: widgets.example.com", "    - name: widgets")},
		{name: "owned crd missing from bundle", rule: "csv-owned-crd-present", sev: Error, msg: "gadgets.example.com is not in the bundle",
			mutate: replace(csvFile, "      kind: Widget\n      displayName: Widget\n", "      kind: Widget\n      displayName: Widget\n    - name: gadgets.example.com\n      version: v1\n      kind: Gadget\n")},
		{name: "owned crd version not served", rule: "csv-owned-crd-present", sev: Error, msg: "v2", hint: "v1",
			mutate: replace(csvFile, "      version: v1\n      kind: Widget", "      version: v2\n      kind: Widget")},
		{name: "owned crd kind mismatch", rule: "csv-owned-crd-present", sev: Error, field: "spec.customresourcedefinitions.owned[0].kind",
			mutate: replace(csvFile, "      version: v1\n      kind: Widget", "      version: v1\n      kind: Widgit")},
		{name: "required crd malformed", rule: "csv-required-crds", sev: Error, msg: "has no version",
			mutate: replace(csvFile, "  relatedImages:\n", "    required:\n    - name: gadgets.other.io\n      kind: Gadget\n  relatedImages:\n")},
		{name: "crd not owned (edge: infinispan; operator-sdk agrees)", rule: "crd-not-owned", sev: Error, file: "manifests/gadgets.crd.yaml",
			mutate: func(t testing.TB, m fstest.MapFS) {
				m["manifests/gadgets.crd.yaml"] = &fstest.MapFile{Data: []byte(strings.NewReplacer("widget", "gadget", "Widget", "Gadget").Replace(string(m[crdFile].Data)))}
			}},
		{name: "crd duplicate", rule: "crd-duplicate", sev: Error,
			mutate: func(t testing.TB, m fstest.MapFS) { m["manifests/again.yaml"] = m[crdFile] }},
		{name: "crd name", rule: "crd-name", sev: Error, hint: "widgets.example.com",
			mutate: replace(crdFile, "  name: widgets.example.com", "  name: widget.example.com")},
		{name: "crd scope", rule: "crd-scope", sev: Error, hint: "Namespaced",
			mutate: replace(crdFile, "scope: Namespaced", "scope: Namespace")},
		{name: "crd storage versions", rule: "crd-versions", sev: Error, msg: "0 storage versions",
			mutate: replace(crdFile, "storage: true", "storage: false")},
		{name: "crd preserveUnknownFields in v1 (operator-sdk agrees)", rule: "crd-preserve-unknown-fields", sev: Error,
			mutate: replace(crdFile, "  scope: Namespaced", "  scope: Namespaced\n  preserveUnknownFields: true")},
		{name: "crd schema", rule: "crd-schema", sev: Error, field: "spec.versions[0]",
			mutate: replace(crdFile, "    schema:\n      openAPIV3Schema:\n        type: object\n        x-kubernetes-preserve-unknown-fields: true\n", "")},
		{name: "removed api is a warning below the removal", rule: "k8s-removed-api", sev: Warning, msg: "removed in Kubernetes 1.25",
			mutate: func(t testing.TB, m fstest.MapFS) {
				edit(t, m, csvFile, "minKubeVersion: 1.25.0", "minKubeVersion: 1.21.0")
				m["manifests/pdb.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\n")}
			}},
		{name: "removed api is an error at the target", rule: "k8s-removed-api", sev: Error, msg: "targets 1.25",
			mutate: func(t testing.TB, m fstest.MapFS) {
				m["manifests/pdb.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\n")}
			}},
		{name: "removed api judged against --k8s-version", rule: "k8s-removed-api", sev: Error, msg: "targets 1.30", opts: Options{K8sVersion: "1.30"},
			mutate: func(t testing.TB, m fstest.MapFS) {
				edit(t, m, csvFile, "minKubeVersion: 1.25.0", "minKubeVersion: 1.21.0")
				m["manifests/pdb.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: policy/v1beta1\nkind: PodDisruptionBudget\nmetadata:\n  name: pdb\n")}
			}},
		{name: "bundle too large", rule: "bundle-size", sev: Error, msg: "over OLM's 1 MiB limit",
			mutate: func(t testing.TB, m fstest.MapFS) {
				m["manifests/big.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\nbinaryData:\n  blob: " + randomBase64(1400*1024) + "\n")}
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := validFS(t)
			tc.mutate(t, m)
			rep := check(t, m, tc.opts)
			var got []Finding
			for _, f := range rep.Findings {
				if f.Rule == tc.rule {
					got = append(got, f)
				}
			}
			require.NotEmpty(t, got, "rule %s found nothing; all findings: %+v", tc.rule, rep.Findings)
			f := got[0]
			for _, g := range got {
				if strings.Contains(g.Message, tc.msg) {
					f = g
					break
				}
			}
			assert.Equal(t, tc.sev, f.Severity, "severity")
			assert.Contains(t, f.Message, tc.msg)
			assert.Contains(t, f.Hint, tc.hint)
			if tc.file != "" {
				assert.Equal(t, tc.file, f.File)
			}
			if tc.field != "" {
				assert.Equal(t, tc.field, f.Field)
			}
			assert.NotEmpty(t, f.Hint, "every finding says how to fix it")
		})
	}
}

func randomBase64(n int) string {
	// A linear congruential generator: incompressible enough, and
	// deterministic.
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	b := make([]byte, n)
	x := uint32(2463534242)
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = alphabet[x%64]
	}
	return string(b)
}

func TestFindingsCarryLines(t *testing.T) {
	m := validFS(t)
	edit(t, m, csvFile, "type: OwnNamespace", "type: OwnNamespacejl")
	rep := check(t, m, Options{})
	require.Len(t, rep.Findings, 1)
	data := string(m[csvFile].Data)
	line := strings.Count(data[:strings.Index(data, "OwnNamespacejl")], "\n") + 1
	assert.Equal(t, line, rep.Findings[0].Line)
}

func TestSelectAndSkip(t *testing.T) {
	m := validFS(t)
	edit(t, m, csvFile, "type: OwnNamespace", "type: OwnNamespacejl")
	edit(t, m, csvFile, "  minKubeVersion: 1.25.0\n", "")
	all := check(t, m, Options{})
	assert.Len(t, all.Findings, 2)
	sel := check(t, m, Options{Select: []string{"csv-install-modes"}})
	require.Len(t, sel.Findings, 1)
	assert.Equal(t, "csv-install-modes", sel.Findings[0].Rule)
	skip := check(t, m, Options{Skip: []string{"csv-install-modes"}})
	require.Len(t, skip.Findings, 1)
	assert.Equal(t, "csv-min-kube-version-missing", skip.Findings[0].Rule)
	err := Options{Skip: []string{"csv-install-mode"}}.CheckRuleIDs()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did you mean "csv-install-modes"`)
}

func TestRunFailOnAndPackageRules(t *testing.T) {
	a, b := validFS(t), validFS(t)
	edit(t, b, csvFile, "  minKubeVersion: 1.25.0\n", "")
	load := func(m fstest.MapFS) func(context.Context) (*bundle.Bundle, error) {
		return func(context.Context) (*bundle.Bundle, error) { return bundle.Load(m) }
	}
	in := []Input{{Path: "a", Load: load(a)}, {Path: "b", Load: load(b)}}
	res := Run(context.Background(), in, Options{})
	assert.False(t, res.Passed, "two bundles with one CSV name fail")
	require.Len(t, res.Bundles, 2)
	assert.Equal(t, "a", res.Bundles[0].Path)
	var dup int
	for _, br := range res.Bundles {
		for _, f := range br.Findings {
			if f.Rule == "package-duplicate-csv" {
				dup++
				assert.Contains(t, f.Message, "widget-operator.v1.2.0")
			}
		}
	}
	assert.Equal(t, 2, dup, "both bundles get the duplicate finding")

	res = Run(context.Background(), in[1:], Options{})
	assert.True(t, res.Passed, "a warning does not fail by default")
	res = Run(context.Background(), in[1:], Options{FailOn: Warning})
	assert.False(t, res.Passed, "--fail-on warning fails on a warning")
}

func TestCSVLintStandalone(t *testing.T) {
	m := validFS(t)
	b, err := bundle.ParseCSVFile("widget.csv.yaml", m[csvFile].Data)
	require.NoError(t, err)
	assert.True(t, b.Standalone())
	rep := Check("widget.csv.yaml", b, nil, Options{})
	assert.Empty(t, rep.Findings, "bundle rules (annotations, CRDs present) do not run on a lone CSV")
}
