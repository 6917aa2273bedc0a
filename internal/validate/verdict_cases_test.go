package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// verdictCases are the fixtures of testdata/cases made for the rules that
// bring opm's default verdict up to operator-sdk's (test/apiverdicts runs
// operator-sdk's validators over the same fixtures and compares): each
// expects a finding of one rule at one severity, or no error at all.
var verdictCases = []struct {
	fixture string
	rule    string // "" when the fixture must have no error
	sev     Severity
	msg     string
}{
	{"csv-no-display-name", "csv-display-name", Error, "spec.displayName is missing"},
	{"csv-skiprange-miscased", "csv-annotation-case", Error, `the key OLM reads is "olm.skipRange"`},
	{"alm-examples-not-owned", "csv-alm-examples-api", Error, "example.com/v1, Kind=Gadget, which the CSV does not own"},
	{"olm-examples-not-owned", "csv-alm-examples-api", Error, "which the CSV does not own"},
	{"crd-not-owned", "crd-not-owned", Error, "gadgets.example.com is in the bundle but the CSV does not own it"},
	{"dependency-unknown-type", "metadata-dependencies", Error, "unknown dependency type olm.gvkk"},
	{"dependency-gvk-no-kind", "metadata-dependencies", Error, "no kind"},
	{"dependency-package-bad-range", "metadata-dependencies", Error, "is not a semver range"},
	{"dependency-constraint-no-cel", "metadata-dependencies", Error, "constraint has none of cel"},
	{"dependency-constraint-compound", "", 0, ""},
	{"dependencies-valid", "", 0, ""},
	{"dependencies-in-properties-file", "", 0, ""},
	{"property-gvk-no-kind", "metadata-properties", Error, "needs version and kind"},
	{"property-package-mismatch", "metadata-properties", Error, `olm.package property names package "gadget-operator"`},
	{"object-label-invalid", "manifest-metadata", Error, `label "app.kubernetes.io/name" has an invalid value`},
	{"object-annotation-key-invalid", "manifest-metadata", Error, `annotation key "example.com/scrape port" is invalid`},
	{"object-annotations-too-large", "manifest-metadata", Error, "over the API server's limit"},
	{"object-namespace", "manifest-metadata", Warning, "which OLM ignores"},
	{"object-finalizer-invalid", "manifest-metadata", Error, `finalizer "example.com/clean up" is invalid`},
	{"csv-label-invalid", "manifest-metadata", Error, `label key "operatorframework.io/arch amd64" is invalid`},
	{"install-mode-duplicate", "csv-install-modes", Error, "twice"},
	{"icon-empty-list", "", 0, ""},
	{"crd-singular-upper", "crd-spec", Error, `singular "Widget" is not a DNS-1035 label`},
	{"crd-listkind-is-kind", "crd-spec", Error, `listKind and kind are both "Widget"`},
	{"crd-short-name-invalid", "crd-spec", Error, `shortNames entry "wi dget"`},
	{"crd-printer-column-type", "crd-spec", Error, `printer column type "nonsense"`},
	{"crd-printer-column-miscased-path", "", 0, ""},
	{"crd-scale-path", "crd-spec", Error, `scale specReplicasPath "spec"`},
	{"crd-conversion-webhook-no-config", "crd-spec", Error, "without a webhook client config"},
	// Controls: rules that already agreed with operator-sdk.
	{"csv-min-kube-v-prefix", "csv-min-kube-version-format", Error, `"v1.25.0"`},
	{"csv-no-install", "csv-deployments", Error, `install strategy is ""`},
	{"related-image-empty", "csv-related-images", Error, "empty image reference"},
}

func TestVerdictCases(t *testing.T) {
	for _, tc := range verdictCases {
		t.Run(tc.fixture, func(t *testing.T) {
			rep := check(t, caseFS(t, tc.fixture), Options{})
			if tc.rule == "" {
				for _, f := range rep.Findings {
					assert.NotEqual(t, Error, f.Severity, "unexpected error %s: %s", f.Rule, f.Message)
				}
				return
			}
			var found bool
			for _, f := range findingsOf(rep, tc.rule) {
				if indexOf(f.Message, tc.msg) >= 0 {
					found = true
					assert.Equal(t, tc.sev, f.Severity, "%s: %s", f.Rule, f.Message)
					assert.NotEmpty(t, f.Hint)
					assert.NotZero(t, f.Line, "a finding of a fixture names its line: %+v", f)
				}
			}
			assert.True(t, found, "no %s finding with %q in %+v", tc.rule, tc.msg, rep.Findings)
		})
	}
}
