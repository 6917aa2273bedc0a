package lint_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
	"github.com/opmkit/opm/internal/cmd/exit"
)

const (
	validBundle  = "../../../../testdata/bundles/valid"
	syntaxBundle = "../../../../testdata/bundles/syntax-error"
	csvDir       = "../../../../testdata/csv"
)

func TestCSVLint(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	standalone := csvDir + "/example-operator.clusterserviceversion.yaml"
	inBundle := syntaxBundle + "/manifests/example-operator.clusterserviceversion.yaml"

	// A lone CSV: bundle rules skipped, and opm says so once.
	r := o.Run("csv", "lint", standalone)
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	assert.Equal(t, 1, strings.Count(r.ErrOut, "note: "))
	assert.Contains(t, r.ErrOut, "note: "+standalone+" is not inside a bundle's manifests/ directory: bundle-level rules")
	assert.Contains(t, r.ErrOut, "1 file, 0 errors, 0 warnings, 0 infos — passed")

	// Several files, one JSON entry per file, in order, path as given.
	files := []string{standalone, csvDir + "/syntax-error.clusterserviceversion.yaml", csvDir + "/not-a-csv.yaml", inBundle}
	r = o.Run(append([]string{"csv", "lint", "-o", "json"}, files...)...)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut, "no note in json mode")
	doc := cmdtest.DecodeReport(t, r.Out)
	bundles := doc["bundles"].([]any)
	require.Len(t, bundles, len(files))
	for i, f := range files {
		assert.Equal(t, f, bundles[i].(map[string]any)["path"])
	}
	assert.Equal(t, "example-operator.v0.1.0", bundles[0].(map[string]any)["name"])
	assert.Empty(t, cmdtest.Findings(doc, 0))

	syntax := cmdtest.Findings(doc, 1)
	require.Len(t, syntax, 1)
	assert.Equal(t, "yaml-syntax", syntax[0]["rule"])
	assert.Equal(t, files[1], syntax[0]["file"])
	assert.NotEqual(t, "0", syntax[0]["line"].(json.Number).String())

	assert.Equal(t, []string{"bundle-no-csv"}, cmdtest.RulesOf(cmdtest.Findings(doc, 2)))

	// In a bundle: checked with the bundle, but only the CSV file's
	// findings are kept (the CRD's syntax error is not), named as given.
	assert.Equal(t, "example-operator.v0.2.0", bundles[3].(map[string]any)["name"])
	for _, f := range cmdtest.Findings(doc, 3) {
		assert.Equal(t, inBundle, f["file"])
		assert.NotEqual(t, "yaml-syntax", f["rule"])
	}

	// Text mode for the in-bundle file mentions the file that did not parse.
	r = o.Run("csv", "lint", inBundle)
	assert.Contains(t, r.ErrOut, "manifests/widgets.example.com.crd.yaml did not parse")
	assert.NotContains(t, r.ErrOut, "not inside a bundle's manifests/")

	// The CSV of a valid bundle is clean.
	r = o.Run("csv", "lint", validBundle+"/manifests/example-operator.clusterserviceversion.yaml")
	require.Equal(t, exit.OK, r.Code, r.ErrOut)
	assert.NotContains(t, r.ErrOut, "note:")
}

func TestCSVLintUsageErrors(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no file", nil, "requires at least 1 arg"},
		{"missing file", []string{"nope.yaml"}, "nope.yaml: no such file"},
		{"directory", []string{validBundle}, "is a directory"},
		{"unknown rule", []string{"--skip", "yaml-syntaks", csvDir + "/not-a-csv.yaml"}, `did you mean "yaml-syntax"`},
		{"bad fail-on", []string{"--fail-on", "x", csvDir + "/not-a-csv.yaml"}, `invalid --fail-on "x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := o.Run(append([]string{"csv", "lint"}, tc.args...)...)
			assert.Equal(t, exit.Usage, r.Code)
			assert.Contains(t, r.ErrOut, tc.want)
		})
	}
}

// TestCSVLintFourFindings is the acceptance case: a CSV with
// release "01", minKubeVersion 1.21, an install mode typo and an owned CRD
// missing from its bundle gives exactly those four findings and exit 1.
func TestCSVLintFourFindings(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	const csv = "../../../../testdata/bundles/lint-four/manifests/example-operator.clusterserviceversion.yaml"
	r := o.Run("csv", "lint", csv, "-o", "json")
	require.Equal(t, 1, r.Code, r.ErrOut)
	var res struct {
		Passed  bool
		Bundles []struct {
			Path     string
			Findings []struct{ Rule, Severity, Field, Hint string }
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &res))
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
	r = o.Run("csv", "lint", csv)
	require.Equal(t, 1, r.Code)
	for _, id := range rules {
		assert.Contains(t, r.ErrOut, id)
	}
	assert.Contains(t, r.ErrOut, `write minKubeVersion: "1.21.0"`)
	assert.Contains(t, r.ErrOut, "did you mean OwnNamespace?")
}

// A CRD file of a bundle given to csv lint is not "outside a bundle": opm
// says it is not the bundle's CSV and what to run instead.
func TestCSVLintCRDInBundle(t *testing.T) {
	t.Parallel()
	crd := validBundle + "/manifests/widgets.example.com.crd.yaml"
	r := cmdtest.Run(t, "csv", "lint", crd)
	require.Equal(t, exit.Usage, r.Code, r.ErrOut)
	assert.Contains(t, r.ErrOut, crd+" is not the bundle's CSV (it holds a CustomResourceDefinition)")
	assert.Contains(t, r.ErrOut, "use opm bundle validate "+validBundle)
	assert.NotContains(t, r.ErrOut, "not inside a bundle")
}

// -o sarif writes a SARIF log to stdout, findings located in the file.
func TestCSVLintSARIF(t *testing.T) {
	t.Parallel()
	file := csvDir + "/syntax-error.clusterserviceversion.yaml"
	r := cmdtest.Run(t, "csv", "lint", "-o", "sarif", file)
	require.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.ErrOut, "no note or report on stderr with -o sarif")
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name, Version, InformationURI string
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Out), &log), r.Out)
	assert.Equal(t, "2.1.0", log.Version)
	require.Len(t, log.Runs, 1)
	assert.Equal(t, "opm", log.Runs[0].Tool.Driver.Name)
	assert.NotEmpty(t, log.Runs[0].Tool.Driver.Version)
	require.NotEmpty(t, log.Runs[0].Results)
	loc := log.Runs[0].Results[0].Locations[0].PhysicalLocation.ArtifactLocation.URI
	assert.True(t, strings.HasSuffix(loc, "testdata/csv/syntax-error.clusterserviceversion.yaml"), loc)
	assert.False(t, strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "file:"), "relative to the working directory: %s", loc)

	r = cmdtest.Run(t, "csv", "lint", "-o", "xml", file)
	require.Equal(t, exit.Usage, r.Code)
	assert.Contains(t, r.ErrOut, `invalid --output "xml": use text, json or sarif`)
}
