package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSyntaxErrorsListedFirst: a file that does not parse causes other
// findings (its CRD is "not in the bundle", annotations.yaml is "missing"):
// the syntax error, the cause, comes first in the report whatever the file
// and line of the findings it causes.
func TestSyntaxErrorsListedFirst(t *testing.T) {
	t.Parallel()
	m := validFS(t)
	edit(t, m, crdFile, "  scope: Namespaced", "  scope: [Namespaced")
	edit(t, m, annFile, "annotations:\n", "annotations:\n  x: [\n")
	res := Run(t.Context(), []Input{{Path: "x", Load: loadMap(m)}}, Options{})
	require.Len(t, res.Bundles, 1)
	var rules []string
	for _, f := range res.Bundles[0].Findings {
		rules = append(rules, f.Rule+" "+f.File)
	}
	require.GreaterOrEqual(t, len(rules), 4, "two syntax errors and what they cause: %v", rules)
	assert.Equal(t, []string{"yaml-syntax " + crdFile, "yaml-syntax " + annFile}, rules[:2], "root causes first, by file")
	assert.Contains(t, rules[2:], "csv-owned-crd-present "+csvFile)
	assert.Contains(t, rules, "annotations-missing "+annFile)
	for _, f := range res.Bundles[0].Findings {
		if f.Rule == "annotations-missing" {
			assert.Equal(t, annFile+" cannot be read: it has a syntax error (see its yaml-syntax finding)", f.Message, "not 'missing': it is there")
		}
	}

	// NewResult (csv lint, opm validate) sorts the same way.
	rep := NewResult([]BundleReport{{Findings: []Finding{
		{Rule: "catalog-default-channel", Severity: Error, File: "p/catalog.json", Line: 1},
		{Rule: "catalog-bundle-channel", Severity: Error, File: "p/catalog.json", Line: 2},
		{Rule: RuleCatalogSyntax.ID, Severity: Error, File: "p/catalog.json", Line: 11},
	}}}, Error)
	assert.Equal(t, RuleCatalogSyntax.ID, rep.Bundles[0].Findings[0].Rule)
	assert.Equal(t, "catalog-default-channel", rep.Bundles[0].Findings[1].Rule)
}
