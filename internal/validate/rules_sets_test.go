package validate

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

// byField returns the findings of rule (field: message).
func byField(rep BundleReport, rule string) map[string]Finding {
	out := map[string]Finding{}
	for _, f := range rep.Findings {
		if f.Rule == rule {
			out[f.Field] = f
		}
	}
	return out
}

func TestRuleSetsAreOptIn(t *testing.T) {
	t.Parallel()
	m := validFS(t)
	edit(t, m, csvFile, "  - type: AllNamespaces\n    supported: true", "  - type: AllNamespaces\n    supported: false")
	edit(t, m, csvFile, "image: quay.example.com/widgets/operator@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\n  install", "image: quay.example.com/widgets/operator:v1\n  install")
	// Nothing selected: the default set only, so neither finding.
	assert.Empty(t, check(t, m, Options{}).Findings)
	// A set by name; default,SET adds it to the default rules.
	rep := check(t, m, Options{Select: []string{SetOLMv1}})
	assert.Len(t, byField(rep, RuleOLMv1AllNamespaces.ID), 1)
	assert.Empty(t, byField(rep, ruleImagePinned.ID))
	rep = check(t, m, Options{Select: []string{SetSupplyChain}})
	assert.Len(t, byField(rep, ruleImagePinned.ID), 1)
	assert.Empty(t, byField(rep, RuleOLMv1AllNamespaces.ID))
	// Skipping a set drops it even when selected by set.
	rep = check(t, m, Options{Select: []string{SetOLMv1, SetSupplyChain}, Skip: []string{SetSupplyChain}})
	assert.Empty(t, byField(rep, ruleImagePinned.ID))
	assert.NotEmpty(t, byField(rep, RuleOLMv1AllNamespaces.ID))
	// By rule id.
	rep = check(t, m, Options{Select: []string{"default", ruleImagePinned.ID}})
	assert.Len(t, rep.Findings, 1)
	// --allowed-registries runs its rule without --select.
	rep = check(t, m, Options{AllowedRegistries: []string{"registry.example.com"}})
	assert.Len(t, byField(rep, ruleRegistryAllowed.ID), 2)
	assert.Len(t, rep.Findings, 2)

	require.NoError(t, Options{Select: []string{"olmv1", "supply-chain", "default"}}.CheckRuleIDs())
	err := Options{Select: []string{"olmv2"}}.CheckRuleIDs()
	require.Error(t, err)
	assert.Contains(t, err.Error(), `did you mean "olmv1"`)
}

func TestOLMv1Rules(t *testing.T) {
	t.Parallel()
	olm := Options{Select: []string{SetOLMv1}}
	assert.Empty(t, check(t, validFS(t), olm).Findings, "the valid fixture is installable by OLM v1")

	m := validFS(t)
	edit(t, m, csvFile, "  - type: AllNamespaces\n    supported: true", "  - type: AllNamespaces\n    supported: false")
	f := byField(check(t, m, olm), RuleOLMv1AllNamespaces.ID)["spec.installModes"]
	assert.Equal(t, Error, f.Severity)
	assert.Contains(t, f.Message, "OwnNamespace, SingleNamespace but not AllNamespaces")
	assert.Equal(t, csvFile, f.File)
	assert.NotZero(t, f.Line)

	m = validFS(t)
	edit(t, m, csvFile, "      displayName: Widget\n", "      displayName: Widget\n    required:\n    - name: gadgets.example.com\n      version: v1\n      kind: Gadget\n")
	m["metadata/dependencies.yaml"] = &fstest.MapFile{Data: []byte("dependencies:\n- type: olm.package\n  value: {packageName: gadget, version: '>=1.0.0'}\n- type: olm.label\n  value: {label: x}\n")}
	m["metadata/properties.yaml"] = &fstest.MapFile{Data: []byte("properties:\n- type: olm.constraint\n  value: {failureMessage: x, cel: {rule: 'true'}}\n")}
	deps := byField(check(t, m, olm), RuleOLMv1Dependencies.ID)
	assert.Len(t, deps, 3, "%v", deps) // the olm.label dependency is not refused
	assert.Contains(t, deps["spec.customresourcedefinitions.required[0]"].Message, "gadgets.example.com")
	assert.Equal(t, "metadata/dependencies.yaml", deps["dependencies[0]"].File)
	assert.Equal(t, 2, deps["dependencies[0]"].Line)
	assert.Equal(t, "metadata/properties.yaml", deps["properties[0]"].File)

	m = validFS(t)
	edit(t, m, csvFile, "  install:\n", `  apiservicedefinitions:
    owned:
    - {name: v1.api.example.com, group: api.example.com, version: v1, kind: Thing}
  webhookdefinitions:
  - {type: ValidatingAdmissionWebhook, generateName: vwidgets.example.com, deploymentName: widget-operator,
     rules: [{apiGroups: ["*"], resources: [widgets]}, {apiGroups: [admissionregistration.k8s.io], resources: [ValidatingWebhookConfigurations]}]}
  - {type: ValidatingAdmissionWebhook, generateName: vwidgets.example.com, deploymentName: gone}
  - {type: ConversionWebhook, generateName: cwidgets.example.com, deploymentName: widget-operator, conversionCRDs: [widgets.example.com, gadgets.example.com]}
  - {type: ConversionWebhook, generateName: Bad_Name, deploymentName: widget-operator, conversionCRDs: [widgets.example.com]}
  install:
`)
	edit(t, m, csvFile, "      - name: widget-operator\n", "      - name: widget-operator\n        spec: {}\n      - name: Widget_Operator\n")
	edit(t, m, csvFile, "          verbs: [\"*\"]\n", "          verbs: [\"*\"]\n        - apiGroups: [operators.coreos.com]\n          resources: [operatorconditions]\n          verbs: [get]\n")
	rep := check(t, m, olm)
	api := byField(rep, RuleOLMv1APIServices.ID)
	assert.Contains(t, api["spec.apiservicedefinitions.owned[0]"].Message, "v1.api.example.com")
	wh := rep.Findings[:0:0]
	for _, f := range rep.Findings {
		if f.Rule == RuleOLMv1Webhooks.ID {
			wh = append(wh, f)
		}
	}
	msgs := map[Severity][]string{}
	for _, f := range wh {
		msgs[f.Severity] = append(msgs[f.Severity], f.Message)
	}
	assert.Len(t, msgs[Warning], 4, "one certificate-provider warning per webhook")
	assert.Len(t, msgs[Error], 9, "%q", msgs[Error])
	joined := ""
	for _, s := range msgs[Error] {
		joined += s + "\n"
	}
	for _, want := range []string{
		`intercepts API group "*"`,
		`intercepts admissionregistration.k8s.io "ValidatingWebhookConfigurations"`,
		`"vwidgets.example.com" of type ValidatingAdmissionWebhook is defined twice`,
		`names deployment "gone"`,
		`conversion webhook "cwidgets.example.com" in a bundle that supports [OwnNamespace SingleNamespace AllNamespaces]`,
		`converts gadgets.example.com, which the CSV does not own`,
		`webhook name "Bad_Name"`,
		`conversion webhooks cwidgets.example.com, Bad_Name all convert widgets.example.com`,
	} {
		assert.Contains(t, joined, want)
	}
	dep := byField(rep, RuleOLMv1Deployments.ID)
	assert.Len(t, dep, 1)
	assert.Contains(t, dep["spec.install.spec.deployments[1].name"].Message, `"Widget_Operator"`)
	oc := byField(rep, RuleOLMv1OperatorConditions.ID)
	assert.Len(t, oc, 1)
	assert.Equal(t, Warning, oc["spec.install.spec.clusterPermissions[0].rules[1]"].Severity)
}

func TestSupplyChainRules(t *testing.T) {
	t.Parallel()
	sc := Options{Select: []string{SetSupplyChain}, AllowedRegistries: []string{"quay.example.com/widgets", "registry.example.com:5000"}}
	assert.Empty(t, check(t, validFS(t), sc).Findings, "the valid fixture is pinned, from an allowed registry")
	// The CI recipe of supply-chain.md (--select default,supply-chain
	// --fail-on warning) passes a pinned bundle: without --allowed-registries
	// there is no list to check against, which is no finding of the bundle.
	assert.Empty(t, check(t, validFS(t), Options{Select: []string{"default", SetSupplyChain}}).Findings,
		"a pinned bundle and no --allowed-registries: nothing to report")

	m := validFS(t)
	edit(t, m, csvFile, "    capabilities: Basic Install\n", "    capabilities: Basic Install\n    containerImage: quay.example.com/widgets/operator:v1.2.0\n")
	edit(t, m, csvFile, "              containers:\n", `              initContainers:
              - name: init
                image: registry.example.com:5000/init@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
              containers:
              - name: proxy
                image: docker.io/library/nginx:1.25
                env:
                - {name: RELATED_IMAGE_AGENT, value: "quay.example.com/widgets/agent:latest"}
                - {name: OTHER_IMAGE, value: "evil.example.com/x:1"}
                - {name: RELATED_IMAGE_DB, value: "ghcr.io/db/db@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}
`)
	edit(t, m, csvFile, "  install:\n", "  - name: sidecar\n    image: quay.example.com/widgetsplus/sidecar\n  install:\n")
	rep := check(t, m, sc)
	pinned := byField(rep, ruleImagePinned.ID)
	assert.ElementsMatch(t, []string{
		"metadata.annotations.containerImage",
		"spec.install.spec.deployments[0].spec.template.spec.containers[0].image",
		"spec.install.spec.deployments[0].spec.template.spec.containers[0].env[0].value",
		"spec.relatedImages[1].image",
	}, keys(pinned))
	f := pinned["spec.install.spec.deployments[0].spec.template.spec.containers[0].env[0].value"]
	assert.Equal(t, Warning, f.Severity)
	assert.Contains(t, f.Message, `RELATED_IMAGE_AGENT of container "proxy" of deployment "widget-operator" is quay.example.com/widgets/agent:latest, not pinned by digest`)
	assert.Contains(t, f.Hint, "skopeo inspect")
	assert.NotZero(t, f.Line)

	allowed := byField(rep, ruleRegistryAllowed.ID)
	assert.ElementsMatch(t, []string{
		"spec.install.spec.deployments[0].spec.template.spec.containers[0].image",
		"spec.install.spec.deployments[0].spec.template.spec.containers[0].env[2].value",
		"spec.relatedImages[1].image", // widgetsplus is not under widgets/
	}, keys(allowed))
	assert.Contains(t, allowed["spec.install.spec.deployments[0].spec.template.spec.containers[0].image"].Message, "from docker.io")
	// --fail-on as usual: warnings pass by default, fail with warning.
	res := Run(t.Context(), []Input{{Path: "x", Load: loadMap(m)}}, sc)
	assert.True(t, res.Passed)
	sc.FailOn = Warning
	res = Run(t.Context(), []Input{{Path: "x", Load: loadMap(m)}}, sc)
	assert.False(t, res.Passed)
}

func TestRegistryMatching(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		ref, registry string
		pinned        bool
	}{
		{"nginx", "docker.io", false},
		{"library/nginx:1", "docker.io", false},
		{"index.docker.io/library/nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "docker.io", true},
		{"localhost/x:1", "localhost", false},
		{"127.0.0.1:5000/x/y:tag@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "127.0.0.1:5000", true},
		{"quay.io/org/x@sha256:short", "quay.io", false},
	} {
		assert.Equal(t, tc.registry, Registry(tc.ref), tc.ref)
		assert.Equal(t, tc.pinned, Pinned(tc.ref), tc.ref)
	}
	assert.True(t, RegistryAllowed("nginx:1", []string{"docker.io"}))
	assert.True(t, RegistryAllowed("nginx:1", []string{"index.docker.io/library"}))
	assert.True(t, RegistryAllowed("quay.io/org/x:1", []string{"quay.io/org/"}))
	assert.False(t, RegistryAllowed("quay.io/organisation/x:1", []string{"quay.io/org"}))
	assert.False(t, RegistryAllowed("quay.io.evil.com/x:1", []string{"quay.io"}))
	assert.False(t, RegistryAllowed("127.0.0.1:5001/x", []string{"127.0.0.1:5000"}))
}

func keys(m map[string]Finding) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func loadMap(m fstest.MapFS) func(context.Context) (*bundle.Bundle, error) {
	return func(context.Context) (*bundle.Bundle, error) { return bundle.Load(m) }
}

// TestPinnedDigest: the one parser of a pull spec's digest (issue 36's
// fold of catalogimages.Digest and Pinned).
func TestPinnedDigest(t *testing.T) {
	hex := "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	for ref, want := range map[string]string{
		"quay.io/x@sha256:" + hex:          "sha256:" + hex,
		" quay.io/x:1@sha256:" + hex + " ": "sha256:" + hex,
		"quay.io/x@sha256:" + "0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF": "",
		"quay.io/x@sha256:" + hex[:63]:               "",
		"quay.io/x:1":                                "",
		"quay.io/x@sha512:" + hex + hex:              "sha512:" + hex + hex,
		"quay.io/x@sha256:" + hex + "@sha256:" + hex: "",
	} {
		assert.Equal(t, want, PinnedDigest(ref), ref)
		assert.Equal(t, want != "", Pinned(ref), ref)
	}
}
