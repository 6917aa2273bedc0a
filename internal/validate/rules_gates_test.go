package validate

import (
	"io/fs"
	"os"
	"path"
	"sort"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatesFS reads testdata/gates: testdata/valid made to pass both gates
// with no finding (docs/validation.md's CI recipes run on it).
func gatesFS(t testing.TB) fstest.MapFS {
	t.Helper()
	m := fstest.MapFS{}
	root := "testdata/gates"
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

var gates = Options{Select: []string{SetDefault, SetOperatorHub, SetOpenShift, SetPreflight, SetCommunity, SetConforma}, FailOn: Warning}

// rulesOf lists the rules of a report's findings, each once, sorted.
func rulesOf(rep BundleReport) []string {
	set := map[string]bool{}
	for _, f := range rep.Findings {
		set[f.Rule] = true
	}
	var out []string
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func TestGatesFixturePassesEveryGate(t *testing.T) {
	t.Parallel()
	rep := check(t, gatesFS(t), gates)
	assert.Empty(t, rep.Findings)
	// testdata/valid is a fine default-set bundle, but not ready to publish.
	assert.Equal(t, []string{"community-required-fields", "conforma-feature-annotations", "conforma-network-policy-rbac", "conforma-valid-subscription", "openshift-versions", "operatorhub-crd-descriptions", "operatorhub-resource-requests", "preflight-feature-annotations"}, rulesOf(check(t, validFS(t), gates)))
}

func TestGateSetsSelectDefaultRulesOnce(t *testing.T) {
	t.Parallel()
	m := gatesFS(t)
	edit(t, m, csvFile, "  version: 1.2.0\n", "")
	// csv-version is a default rule in the operatorhub set: it runs with
	// either, and once with both.
	for _, sel := range [][]string{{SetDefault}, {SetOperatorHub}, {SetDefault, SetOperatorHub}} {
		assert.Len(t, byField(check(t, m, Options{Select: sel}), "csv-version"), 1, "%v", sel)
	}
	assert.Empty(t, byField(check(t, m, Options{Select: []string{SetOpenShift}}), "csv-version"))
	assert.Empty(t, byField(check(t, m, Options{Select: []string{SetOperatorHub}, Skip: []string{"csv-version"}}), "csv-version"))
	// A gate alone still fails a bundle it cannot read.
	m = gatesFS(t)
	m[csvFile].Data = []byte("kind: ClusterServiceVersion\nmetadata: [\n")
	for _, set := range GateSets {
		assert.Contains(t, rulesOf(check(t, m, Options{Select: []string{set}})), "yaml-syntax", set)
	}
}

func TestOperatorHubRules(t *testing.T) {
	t.Parallel()
	hub := Options{Select: []string{SetOperatorHub}}
	cases := []struct {
		name, file, old, new string
		opts                 *Options
		rule, field, msg     string
		sev                  Severity
	}{
		{"no provider", csvFile, "  provider:\n    name: Example\n", "", nil, "operatorhub-provider", "spec.provider.name", "not set", Error},
		{"maintainer without email", csvFile, "    email: widgets@example.com\n", "", nil, "operatorhub-maintainers", "spec.maintainers[0].email", "no email", Error},
		{"maintainer bad email", csvFile, "widgets@example.com", "widgets at example", nil, "operatorhub-maintainers", "spec.maintainers[0].email", "not an address", Error},
		{"link without name", csvFile, "  - name: Docs\n", "  - name: ''\n", nil, "operatorhub-links", "spec.links[0].name", "no name", Error},
		{"link bad url", csvFile, "https://example.com/docs", "example docs", nil, "operatorhub-links", "spec.links[0].url", "does not parse", Error},
		{"no icon", csvFile, "  icon:\n  - base64data: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=\n    mediatype: image/svg+xml\n", "", nil, "operatorhub-icon", "spec", "not set", Warning},
		{"empty icon list", csvFile, "  icon:\n  - base64data: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=\n    mediatype: image/svg+xml\n", "  icon: []\n", nil, "operatorhub-icon", "spec.icon", "empty list", Error},
		{"two icons", csvFile, "    mediatype: image/svg+xml\n", "    mediatype: image/svg+xml\n  - base64data: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=\n    mediatype: image/svg+xml\n", nil, "operatorhub-icon", "spec.icon", "lists 2 icons", Error},
		{"icon media type", csvFile, "mediatype: image/svg+xml", "mediatype: image/webp", nil, "operatorhub-icon", "spec.icon[0].mediatype", "image/webp", Error},
		{"capability typo", csvFile, "capabilities: Basic Install", "capabilities: Basic install", nil, "operatorhub-capabilities", "metadata.annotations.capabilities", "not a capability level", Error},
		{"unknown category", csvFile, "categories: Developer Tools, Monitoring", "categories: Developer Tools, Widgets", nil, "operatorhub-categories", "metadata.annotations.categories", `"Widgets" is not one of the standard`, Error},
		{"custom categories", csvFile, "categories: Developer Tools, Monitoring", "categories: Widgets", &Options{Select: []string{SetOperatorHub}, Categories: []string{"Gadgets"}}, "operatorhub-categories", "metadata.annotations.categories", "custom", Error},
		{"partial requests", csvFile, "                    memory: 64Mi\n", "", nil, "operatorhub-resource-requests", "spec.install.spec.deployments[0].spec.template.spec.containers[0].resources.requests", "requests no memory", Warning},
		{"no requests", csvFile, "                resources:\n                  requests:\n                    cpu: 10m\n                    memory: 64Mi\n", "", nil, "operatorhub-resource-requests", "spec.install.spec.deployments[0].spec.template.spec.containers[0]", "neither cpu nor memory", Warning},
		{"crd description", csvFile, "      description: A widget the operator keeps running.\n", "", nil, "operatorhub-crd-descriptions", "spec.customresourcedefinitions.owned[0].description", "no description", Warning},
		{"channel naming", annFile, "channels.v1: stable,fast", "channels.v1: stable,alpha", nil, "operatorhub-channel-naming", `annotations["operators.operatorframework.io.bundle.channels.v1"]`, `"alpha"`, Warning},
		{"crd rbac", csvFile, `        - apiGroups: ["example.com"]`, "        - apiGroups: [\"apiextensions.k8s.io\"]\n          resources: [\"customresourcedefinitions\"]\n          verbs: [\"create\"]\n        - apiGroups: [\"example.com\"]", nil, "operatorhub-crd-rbac", "spec.install.spec.clusterPermissions[0].rules[0]", "may create or patch", Warning},
		{"removed api at k8s-version", crdFile, "apiVersion: apiextensions.k8s.io/v1\n", "apiVersion: apiextensions.k8s.io/v1beta1\n", &Options{Select: []string{SetOperatorHub}, K8sVersion: "1.25"}, "k8s-removed-api", "apiVersion", "removed in Kubernetes 1.22", Error},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := gatesFS(t)
			edit(t, m, tc.file, tc.old, tc.new)
			opts := hub
			if tc.opts != nil {
				opts = *tc.opts
			}
			rep := check(t, m, opts)
			f, ok := byField(rep, tc.rule)[tc.field]
			require.True(t, ok, "no %s finding at %s: %v", tc.rule, tc.field, rep.Findings)
			assert.Contains(t, f.Message, tc.msg)
			assert.Equal(t, tc.sev, f.Severity)
			assert.Equal(t, tc.file, f.File)
			assert.NotZero(t, f.Line)
			// Without the set, none of its own rules run.
			for _, g := range check(t, m, Options{}).Findings {
				assert.NotContains(t, g.Rule, "operatorhub-")
			}
		})
	}
}

func TestOpenShiftRules(t *testing.T) {
	t.Parallel()
	ocp := Options{Select: []string{SetOpenShift}}
	const ann = "  com.redhat.openshift.versions: v4.14-v4.18\n"
	cases := []struct {
		name, file, old, new string
		opts                 *Options
		rule, field, msg     string
		sev                  Severity
	}{
		{"no annotation", annFile, ann, "", nil, "openshift-versions", `annotations["com.redhat.openshift.versions"]`, "not set", Warning},
		{"space", annFile, ann, "  com.redhat.openshift.versions: v4.14 - v4.18\n", nil, "openshift-versions", `annotations["com.redhat.openshift.versions"]`, "space", Error},
		{"list", annFile, ann, "  com.redhat.openshift.versions: v4.14,v4.15\n", nil, "openshift-versions", `annotations["com.redhat.openshift.versions"]`, "legacy lists", Error},
		{"number", annFile, ann, "  com.redhat.openshift.versions: 4.14\n", nil, "openshift-versions", `annotations["com.redhat.openshift.versions"]`, "not a string", Error},
		{"unknown release", annFile, ann, "  com.redhat.openshift.versions: v4.99\n", nil, "openshift-versions", `annotations["com.redhat.openshift.versions"]`, "newer than the releases opm knows", Warning},
		{"ocp-version outside", annFile, ann, ann, &Options{Select: []string{SetOpenShift}, OCPVersion: "4.19"}, "openshift-versions", `annotations["com.redhat.openshift.versions"]`, "outside the bundle's range", Warning},
		{"min kube above range", csvFile, "minKubeVersion: 1.25.0", "minKubeVersion: 1.28.0", nil, "openshift-min-kube-version", "spec.minKubeVersion", "above Kubernetes 1.27 of OpenShift 4.14", Error},
		{"removed api at range end", crdFile, "apiVersion: apiextensions.k8s.io/v1\n", "apiVersion: apiextensions.k8s.io/v1beta1\n", nil, "openshift-removed-api", "apiVersion", "OpenShift 4.18 runs Kubernetes 1.31", Error},
		{"max version patch", csvFile, "    olm.skipRange:", "    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.16.1\"}]'\n    olm.skipRange:", nil, "openshift-max-version", `metadata.annotations["olm.properties"]`, "not Major.Minor", Error},
		{"max version before range", csvFile, "    olm.skipRange:", "    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.12\"}]'\n    olm.skipRange:", nil, "openshift-max-version", `metadata.annotations["olm.properties"]`, "older than OpenShift 4.14", Error},
		{"max version twice", csvFile, "    olm.skipRange:", "    olm.properties: '[{\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.16\"}, {\"type\": \"olm.maxOpenShiftVersion\", \"value\": \"4.17\"}]'\n    olm.skipRange:", nil, "openshift-max-version", `metadata.annotations["olm.properties"]`, "more than once", Error},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := gatesFS(t)
			edit(t, m, tc.file, tc.old, tc.new)
			opts := ocp
			if tc.opts != nil {
				opts = *tc.opts
			}
			rep := check(t, m, opts)
			var got []Finding
			for _, f := range rep.Findings {
				if f.Rule == tc.rule && f.Field == tc.field {
					got = append(got, f)
				}
			}
			require.NotEmpty(t, got, "no %s finding at %s: %v", tc.rule, tc.field, rep.Findings)
			f := got[len(got)-1]
			assert.Contains(t, f.Message, tc.msg)
			assert.Equal(t, tc.sev, f.Severity)
			assert.Equal(t, tc.file, f.File)
			assert.NotZero(t, f.Line)
		})
	}
	// The range decides: v1beta1 CRDs are fine on a bundle that ends at
	// 4.8 (Kubernetes 1.21), not at 4.9.
	m := gatesFS(t)
	edit(t, m, crdFile, "apiVersion: apiextensions.k8s.io/v1\n", "apiVersion: apiextensions.k8s.io/v1beta1\n")
	edit(t, m, csvFile, "minKubeVersion: 1.25.0", "minKubeVersion: 1.19.0")
	edit(t, m, annFile, ann, "  com.redhat.openshift.versions: v4.6-v4.8\n")
	assert.Empty(t, byField(check(t, m, ocp), "openshift-removed-api"))
	edit(t, m, annFile, "v4.6-v4.8", "v4.6-v4.9")
	assert.NotEmpty(t, byField(check(t, m, ocp), "openshift-removed-api"))
	// Only in properties.yaml: a warning, and a YAML number is refused.
	m = gatesFS(t)
	m["metadata/properties.yaml"] = &fstest.MapFile{Data: []byte("properties:\n- type: olm.maxOpenShiftVersion\n  value: 4.10\n")}
	var sevs []Severity
	for _, f := range check(t, m, ocp).Findings {
		if f.Rule == "openshift-max-version" {
			assert.Equal(t, "metadata/properties.yaml", f.File)
			assert.Equal(t, 3, f.Line)
			sevs = append(sevs, f.Severity)
		}
	}
	assert.ElementsMatch(t, []Severity{Warning, Error}, sevs)
}

// TestPreflightRules pins the verdicts of preflight's own test cases of
// its RequiredAnnotations check (a prepared bundle passes; one without the
// annotations, one missing an entry, one with a wrong optional value fail),
// rebuilt on testdata/gates, and of the related images check.
func TestPreflightRules(t *testing.T) {
	t.Parallel()
	pf := Options{Select: []string{SetPreflight}}
	const gcp = "    features.operators.openshift.io/token-auth-gcp: \"false\"\n"
	const disconnected = "    features.operators.openshift.io/disconnected: \"true\"\n"
	cases := []struct {
		name, old, new string
		want           map[string]string // field: message fragment; none: passes
	}{
		{"prepared as expected", "", "", nil},
		{"optional ones present and right", gcp, gcp + "    features.operators.openshift.io/cnf: \"false\"\n    features.operators.openshift.io/csi: \"true\"\n", nil},
		{"not prepared", "    features.operators.openshift.io/disconnected: \"true\"\n    features.operators.openshift.io/fips-compliant: \"false\"\n    features.operators.openshift.io/proxy-aware: \"false\"\n    features.operators.openshift.io/tls-profiles: \"false\"\n    features.operators.openshift.io/token-auth-aws: \"false\"\n    features.operators.openshift.io/token-auth-azure: \"false\"\n" + gcp, "",
			map[string]string{"metadata.annotations": "token-auth-azure, features.operators.openshift.io/token-auth-gcp"}},
		{"missing an entry", gcp, "", map[string]string{"metadata.annotations": "missing feature annotation(s): features.operators.openshift.io/token-auth-gcp"}},
		{"incorrect required value", `disconnected: "true"`, `disconnected: "True"`, map[string]string{`metadata.annotations["features.operators.openshift.io/disconnected"]`: `"True"`}},
		{"incorrect optional value", gcp, gcp + "    features.operators.openshift.io/cni: \"maybe\"\n", map[string]string{`metadata.annotations["features.operators.openshift.io/cni"]`: `"maybe"`}},
		{"a YAML boolean", `disconnected: "true"`, `disconnected: true`, map[string]string{`metadata.annotations["features.operators.openshift.io/disconnected"]`: "not a string"}},
		{"image not in relatedImages", "image: quay.example.com/widgets/operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n                env", "image: quay.example.com/widgets/other:v1\n                env",
			map[string]string{"spec.install.spec.deployments[0].spec.template.spec.containers[0].image": "quay.example.com/widgets/other:v1, which spec.relatedImages does not list"}},
		// FollowsRestrictedNetworkEnablementGuidelines, for bundles that
		// declare disconnected support.
		{"disconnected, related image by tag", "    image: quay.example.com/widgets/operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n  install", "    image: quay.example.com/widgets/operator:v1\n  install",
			map[string]string{
				"spec.relatedImages[0].image":         "not pinned by digest, in a CSV that declares disconnected support (features.operators.openshift.io/disconnected)",
				"metadata.annotations.containerImage": "which spec.relatedImages does not list",
			}},
		{"disconnected, no RELATED_IMAGE_ variable", "name: RELATED_IMAGE_OPERATOR", "name: OPERATOR_IMAGE",
			map[string]string{"spec.install.spec.deployments": "no container has a RELATED_IMAGE_* variable"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			m := gatesFS(t)
			if tc.old != "" {
				edit(t, m, csvFile, tc.old, tc.new)
			}
			rep := check(t, m, pf)
			got := map[string]string{}
			for _, f := range rep.Findings {
				assert.Equal(t, Warning, f.Severity, "preflight reports these at its warning level")
				assert.NotZero(t, f.Line, f.Field)
				got[f.Field] = f.Message
			}
			require.Len(t, got, len(tc.want), "%v", rep.Findings)
			for field, frag := range tc.want {
				assert.Contains(t, got[field], frag, field)
			}
		})
	}
	// The SCC the CSV asks for: one is information, several or any are
	// warnings.
	for _, tc := range []struct {
		names string
		sev   Severity
		msg   string
	}{{`["my-scc"]`, Info, `asks for the SecurityContextConstraints "my-scc"`}, {`["a", "b"]`, Warning, "asks for 2 SecurityContextConstraints (a, b)"}, {`[]`, Warning, "may use every SecurityContextConstraints"}} {
		m := gatesFS(t)
		edit(t, m, csvFile, `        - apiGroups: ["example.com"]`, "        - apiGroups: [\"security.openshift.io\"]\n          resources: [\"securitycontextconstraints\"]\n          resourceNames: "+tc.names+"\n          verbs: [\"use\"]\n        - apiGroups: [\"example.com\"]")
		f, ok := byField(check(t, m, pf), RulePreflightSCC.ID)["spec.install.spec.clusterPermissions[0].rules[0]"]
		require.True(t, ok, tc.names)
		assert.Equal(t, tc.sev, f.Severity, tc.names)
		assert.Contains(t, f.Message, tc.msg)
		assert.NotZero(t, f.Line)
	}
	// Without the disconnected claim, the guidelines are not asked for;
	// the legacy infrastructure-features list makes the claim too.
	m := gatesFS(t)
	edit(t, m, csvFile, "name: RELATED_IMAGE_OPERATOR\n", "name: OPERATOR_IMAGE\n")
	edit(t, m, csvFile, disconnected, "    features.operators.openshift.io/disconnected: \"false\"\n")
	assert.Empty(t, check(t, m, pf).Findings)
	edit(t, m, csvFile, "    features.operators.openshift.io/disconnected: \"false\"\n", "    features.operators.openshift.io/disconnected: \"false\"\n    operators.openshift.io/infrastructure-features: '[\"Disconnected\"]'\n")
	f := byField(check(t, m, pf), RulePreflightRestrictedNetwork.ID)["spec.install.spec.deployments"]
	assert.Contains(t, f.Message, "(operators.openshift.io/infrastructure-features) but no container")
}
