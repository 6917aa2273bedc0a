package validate

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

var conforma = Options{Select: []string{SetConforma}}

// conformaFindings checks the gates fixture edited by setCSV and returns
// its findings of rule, by field.
func conformaFindings(t *testing.T, m fstest.MapFS, rule string) map[string]Finding {
	t.Helper()
	rep := check(t, m, conforma)
	for _, f := range rep.Findings {
		assert.NotZero(t, f.Line, "%s %s", f.Rule, f.Field)
		assert.Equal(t, Error, f.Severity, "%s: Conforma denies", f.Rule)
	}
	return byField(rep, rule)
}

// TestConformaRules pins the verdicts of Conforma's olm policy tests
// (olm_test.rego) rebuilt on testdata/gates.
func TestConformaRules(t *testing.T) {
	t.Parallel()
	subField := `metadata.annotations["operators.openshift.io/valid-subscription"]`
	// test_subscriptions_annotation_format
	for value, msg := range map[string]string{
		"invalid-json": "not a JSON list", "[]": "empty list", `["spam", "spam"]`: `lists "spam" twice`, "[1]": "item 0 is 1, not a string",
	} {
		m := gatesFS(t)
		edit(t, m, csvFile, `'["Widget Enterprise"]'`, "'"+value+"'")
		got := conformaFindings(t, m, RuleConformaSubscription.ID)
		require.Contains(t, got, subField, value)
		assert.Contains(t, got[subField].Message, msg, value)
		assert.Len(t, check(t, m, conforma).Findings, 1, value)
	}
	m := gatesFS(t)
	edit(t, m, csvFile, "    operators.openshift.io/valid-subscription: '[\"Widget Enterprise\"]'\n", "")
	assert.Contains(t, conformaFindings(t, m, RuleConformaSubscription.ID)["metadata.annotations"].Message, "is not set")

	// test_feature_annotations_format: YAML booleans, a number, one missing.
	m = gatesFS(t)
	edit(t, m, csvFile, `disconnected: "true"`, "disconnected: false")
	edit(t, m, csvFile, `fips-compliant: "false"`, "fips-compliant: true")
	edit(t, m, csvFile, `proxy-aware: "false"`, "proxy-aware: 1")
	edit(t, m, csvFile, "    features.operators.openshift.io/tls-profiles: \"false\"\n", "")
	// Issue 36: one finding for the bundle, naming each, and why.
	got := conformaFindings(t, m, RuleConformaFeatures.ID)
	require.Len(t, byRuleMessages(check(t, m, conforma), RuleConformaFeatures.ID), 1)
	msg := got["metadata.annotations"].Message
	assert.Contains(t, msg, "4 of the 7 features.operators.openshift.io/* annotations Konflux's Conforma policy requires")
	assert.Contains(t, msg, "not set: tls-profiles;")
	assert.Contains(t, msg, `not the string "true" or "false": disconnected is false, fips-compliant is true, proxy-aware is 1`)
	// One wrong value alone is reported at its field.
	m = gatesFS(t)
	edit(t, m, csvFile, `proxy-aware: "false"`, "proxy-aware: 1")
	got = conformaFindings(t, m, RuleConformaFeatures.ID)
	assert.Contains(t, got[`metadata.annotations["features.operators.openshift.io/proxy-aware"]`].Message, "1 of the 7")

	// test_related_img_unpinned, and references in annotations.
	m = gatesFS(t)
	edit(t, m, csvFile, "                  value: quay.example.com/widgets/operator@sha256:", "                  value: registry.io/repository:tag\n                  x: quay.example.com/widgets/operator@sha256:")
	got = conformaFindings(t, m, RuleConformaUnpinned.ID)
	require.Len(t, got, 1, "%v", got)
	assert.Contains(t, got["spec.install.spec.deployments[0].spec.template.spec.containers[0].env[0].value"].Message, "is registry.io/repository:tag, not pinned by digest")

	m = gatesFS(t)
	edit(t, m, csvFile, "    support: Example Widget Team\n", "    support: Example Widget Team\n    mirror.example.com/sources: 'quay.io/widgets/src:v1, and/or AI/Machine Learning; https://example.com/a:b spam localhost:5000/w/x:1 quay.io/widgets/pinned@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef'\n")
	edit(t, m, csvFile, "            metadata:\n              labels:\n", "            metadata:\n              annotations:\n                docket: \"registry.io/docket:v2\"\n              labels:\n")
	got = conformaFindings(t, m, RuleConformaUnpinned.ID)
	var msgs []string
	for _, f := range got {
		msgs = append(msgs, f.Message)
	}
	src := `metadata.annotations["mirror.example.com/sources"]`
	require.Contains(t, got, src)
	assert.Len(t, byRuleMessages(check(t, m, conforma), RuleConformaUnpinned.ID), 3, "%v", msgs)
	for _, img := range []string{"quay.io/widgets/src:v1", "localhost:5000/w/x:1"} {
		assert.Contains(t, byRuleMessages(check(t, m, conforma), RuleConformaUnpinned.ID), "the mirror.example.com/sources annotation of the CSV names the image is "+img+", not pinned by digest")
	}
	assert.Contains(t, got, `spec.install.spec.deployments[0].spec.template.metadata.annotations["docket"]`)

	// test_disallowed_olm_resource_kind / test_allowed_olm_resource_kind.
	m = gatesFS(t)
	m["manifests/deny.yaml"] = &fstest.MapFile{Data: []byte("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\nmetadata:\n  name: default-deny\nspec:\n  podSelector: {}\n")}
	f := conformaFindings(t, m, RuleConformaKinds.ID)["kind"]
	assert.Equal(t, "manifests/deny.yaml", f.File)
	assert.Contains(t, f.Message, `kind "NetworkPolicy" is not one`)

	// test_network_policy_rbac_*: create alone, delete alone are not
	// enough; create, update, patch, delete is; so is a wildcard.
	for verbs, ok := range map[string]bool{
		`["create"]`: false, `["delete"]`: false, `["create", "delete", "get"]`: false,
		`["create", "update", "patch", "delete"]`: true, `["create", "delete", "patch"]`: true, `["*"]`: true,
	} {
		m := gatesFS(t)
		edit(t, m, csvFile, `verbs: ["create", "delete", "get", "list", "patch", "update", "watch"]`, "verbs: "+verbs)
		got := conformaFindings(t, m, RuleConformaNetworkPolicyRBAC.ID)
		assert.Equal(t, !ok, len(got) == 1, verbs)
		if f, bad := got["spec.install.spec"]; bad {
			// Issue 36: says why, names the CSV once (its version in it).
			assert.Contains(t, f.Message, "widget-operator.v1.2.0 may not manage NetworkPolicies")
			assert.Contains(t, f.Message, "Konflux's Conforma policy")
			assert.Equal(t, 1, strings.Count(f.Message, "1.2.0"), f.Message)
		}
	}
	m = gatesFS(t)
	edit(t, m, csvFile, `apiGroups: ["networking.k8s.io"]`, `apiGroups: ["*"]`)
	assert.Empty(t, conformaFindings(t, m, RuleConformaNetworkPolicyRBAC.ID))

	// test_csv_semver_format_bad_semver: csv-version runs with the set.
	m = gatesFS(t)
	edit(t, m, csvFile, "  version: 1.2.0\n", "  version: \"1.2\"\n")
	assert.Contains(t, rulesOf(check(t, m, conforma)), "csv-version")

	// test_bundle_image_index: a bundle read from an image index.
	b, err := bundle.Load(gatesFS(t))
	require.NoError(t, err)
	b.IndexDigest = "sha256:abc"
	rep := Check("quay.example.com/widgets/bundle:v1", b, nil, conforma)
	require.Equal(t, []string{RuleConformaImageIndex.ID}, rulesOf(rep))
	assert.Contains(t, rep.Findings[0].Message, "quay.example.com/widgets/bundle:v1 is an image index (sha256:abc)")
}

func byRuleMessages(rep BundleReport, rule string) []string {
	var out []string
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out = append(out, f.Message)
		}
	}
	return out
}

func TestAnnotationImage(t *testing.T) {
	t.Parallel()
	for w, want := range map[string]bool{
		"quay.io/org/op:v1": true, "localhost/op:1": true, "registry:5000/op:latest": true, "quay.io/org/op": false, "go.kubebuilder.io/v4": false, "registry:5000/op": false,
		"op@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef": true,
		"AI/Machine": false, "and/or": false, "spam": false, "https://example.com/docs": false,
		"example.com/Docs": false, `"quay.io/org/op:v1"`: false, "Learning": false,
	} {
		assert.Equal(t, want, annotationImage(w), w)
	}
}
