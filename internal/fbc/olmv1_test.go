package fbc

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/validate"
)

// TestValidateOLMv1: dependency properties, install modes and owned API
// services read from olm.csv.metadata or the olm.bundle.object CSV; a
// bundle with neither is judged on its dependencies alone.
func TestValidateOLMv1(t *testing.T) {
	t.Parallel()
	csv := base64.StdEncoding.EncodeToString([]byte(`{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"c.v1"},
"spec":{"installModes":[{"type":"AllNamespaces","supported":true}],"webhookdefinitions":[{"type":"ValidatingAdmissionWebhook","generateName":"v.example.com"}]}}`))
	data := `{"schema":"olm.package","name":"p","defaultChannel":"s"}
{"schema":"olm.channel","name":"s","package":"p","entries":[{"name":"a.v1"},{"name":"b.v1","replaces":"a.v1"},{"name":"c.v1","replaces":"b.v1"}]}
{"schema":"olm.bundle","name":"a.v1","package":"p","image":"r/a:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}},
 {"type":"olm.gvk.required","value":{"group":"g","kind":"K","version":"v1"}},{"type":"olm.package.required","value":{"packageName":"q","versionRange":">=1.0.0"}}]}
{"schema":"olm.bundle","name":"b.v1","package":"p","image":"r/b:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.1.0"}},
 {"type":"olm.csv.metadata","value":{"installModes":[{"type":"OwnNamespace","supported":true},{"type":"AllNamespaces","supported":false}],"apiServiceDefinitions":{"owned":[{"name":"v1.api.example.com"}]}}}]}
{"schema":"olm.bundle","name":"c.v1","package":"p","image":"r/c:1","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.2.0"}},
 {"type":"olm.bundle.object","value":{"data":"` + csv + `"}}]}
`
	c := &Catalog{}
	if err := c.LoadFile("p/catalog.json", []byte(data)); err != nil {
		t.Fatal(err)
	}
	if fs := Validate(c); len(fs) != 0 {
		t.Fatalf("the catalog is valid for OLM v0: %v", fs)
	}
	got := map[string][]string{}
	for _, f := range ValidateOLMv1(c) {
		if f.File != "p/catalog.json" || f.Line == 0 {
			t.Errorf("finding without position: %+v", f)
		}
		got[f.Rule] = append(got[f.Rule], f.Message)
	}
	check := func(rule string, n int, wants ...string) {
		t.Helper()
		if len(got[rule]) != n {
			t.Errorf("%s: %d findings, want %d: %q", rule, len(got[rule]), n, got[rule])
		}
		all := strings.Join(got[rule], "\n")
		for _, w := range wants {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no %q in %q", rule, w, all)
			}
		}
	}
	check(validate.RuleOLMv1Dependencies.ID, 2, "bundle a.v1 declares a dependency (olm.gvk.required", "olm.package.required")
	check(validate.RuleOLMv1AllNamespaces.ID, 1, "bundle b.v1: the bundle supports OwnNamespace but not AllNamespaces")
	check(validate.RuleOLMv1APIServices.ID, 1, "bundle b.v1 owns API service v1.api.example.com")
	check(validate.RuleOLMv1Webhooks.ID, 1, `bundle c.v1 has webhook "v.example.com"`)
}
