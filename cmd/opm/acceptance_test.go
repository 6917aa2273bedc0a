package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCSVLintFourFindings is the acceptance case: a CSV with
// release "01", minKubeVersion 1.21, an install mode typo and an owned CRD
// missing from its bundle gives exactly those four findings and exit 1.
func TestCSVLintFourFindings(t *testing.T) {
	isolate(t)
	const csv = "../../testdata/bundles/lint-four/manifests/example-operator.clusterserviceversion.yaml"
	r := opm(t, "csv", "lint", csv, "-o", "json")
	require.Equal(t, 1, r.code, r.errOut)
	var res struct {
		Passed  bool
		Bundles []struct {
			Path     string
			Findings []struct{ Rule, Severity, Field, Hint string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.out), &res))
	assert.False(t, res.Passed)
	require.Len(t, res.Bundles, 1)
	var rules []string
	for _, f := range res.Bundles[0].Findings {
		rules = append(rules, f.Rule)
		assert.Equal(t, "error", f.Severity, f.Rule)
		assert.NotEmpty(t, f.Hint, f.Rule)
	}
	assert.ElementsMatch(t, []string{"csv-release-format", "csv-min-kube-version-format", "csv-install-modes", "csv-owned-crd-present"}, rules)

	// The text report names the four rule ids too.
	r = opm(t, "csv", "lint", csv)
	require.Equal(t, 1, r.code)
	for _, id := range rules {
		assert.Contains(t, r.errOut, id)
	}
	assert.Contains(t, r.errOut, `write minKubeVersion: "1.21.0"`)
	assert.Contains(t, r.errOut, "did you mean OwnNamespace?")
}
