package validate

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

// sarifResultFixture is a run over case fixtures with findings of every
// severity, with and without a line, plus a csv lint report and a bundle
// given by absolute path.
func sarifResultFixture(t *testing.T) (*Result, string) {
	t.Helper()
	base := t.TempDir()
	load := func(m fstest.MapFS) func(context.Context) (*bundle.Bundle, error) {
		return func(context.Context) (*bundle.Bundle, error) { return bundle.Load(m) }
	}
	ignored := caseFS(t, "default-channel-absent")
	ignored["manifests/NOTES.md"] = &fstest.MapFile{Data: []byte("not read")}
	noCSV := validFS(t)
	delete(noCSV, csvFile)
	res := Run(context.Background(), []Input{
		{Path: "bundles/name twice", Load: load(caseFS(t, "csv-name-twice"))},
		{Path: "bundles/no-default", Load: load(ignored)},
		{Path: "bundles/no-csv", Load: load(noCSV)},
		{Path: filepath.Join(base, "abs"), Load: load(caseFS(t, "nul-byte"))},
	}, Options{})
	m := caseFS(t, "unknown-dotted-key")
	lone, err := bundle.ParseCSVFile("lint/widget.csv.yaml", m[csvFile].Data)
	require.NoError(t, err)
	rep := Check("lint/widget.csv.yaml", lone, nil, Options{})
	res.Bundles = append(res.Bundles, rep)
	return res, base
}

func TestSARIFLocationsAndRules(t *testing.T) {
	res, base := sarifResultFixture(t)
	var buf bytes.Buffer
	require.NoError(t, WriteSARIF(&buf, res, SARIFOptions{Version: "1.2.3", InformationURI: "https://example.com/opm", RulesDocURI: "https://example.com/opm/docs/validation.md", BaseDir: base}))
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name, Version, InformationURI string
					Rules                         []struct {
						ID                   string
						HelpURI              string
						Help                 struct{ Text, Markdown string }
						DefaultConfiguration struct{ Level string }
					}
				}
			}
			Results []struct {
				RuleID    string
				RuleIndex int
				Level     string
				Message   struct{ Text string }
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct{ URI string }
						Region           *struct{ StartLine int }
					}
				}
			}
		}
	}
	require.NoError(t, json.Unmarshal(buf.Bytes(), &log))
	require.Equal(t, "2.1.0", log.Version)
	require.Len(t, log.Runs, 1)
	d := log.Runs[0].Tool.Driver
	assert.Equal(t, "opm", d.Name)
	assert.Equal(t, "1.2.3", d.Version)
	require.Len(t, d.Rules, len(Rules()))
	r, _ := Lookup("csv-field-type")
	for _, dr := range d.Rules {
		if dr.ID == r.ID {
			assert.Equal(t, "error", dr.DefaultConfiguration.Level)
			assert.Contains(t, dr.Help.Text, r.Fix)
			assert.Contains(t, dr.Help.Markdown, "**Why:** "+r.Why)
			assert.Equal(t, "https://example.com/opm/docs/validation.md#csv-field-type", dr.HelpURI)
		}
	}

	type loc struct {
		level, uri string
		line       int
	}
	got := map[string]loc{}
	for _, res := range log.Runs[0].Results {
		assert.Equal(t, res.RuleID, d.Rules[res.RuleIndex].ID)
		require.Len(t, res.Locations, 1)
		pl := res.Locations[0].PhysicalLocation
		l := loc{level: res.Level, uri: pl.ArtifactLocation.URI}
		if pl.Region != nil {
			l.line = pl.Region.StartLine
		}
		got[res.RuleID+" "+l.uri] = l
	}
	want := map[string]loc{
		"yaml-duplicate-key bundles/name%20twice/manifests/widget-operator.clusterserviceversion.yaml": {"error", "bundles/name%20twice/manifests/widget-operator.clusterserviceversion.yaml", 5},
		"annotations-default-channel bundles/no-default/metadata/annotations.yaml":                     {"warning", "bundles/no-default/metadata/annotations.yaml", 2},
		"bundle-ignored-file bundles/no-default/manifests/NOTES.md":                                    {"note", "bundles/no-default/manifests/NOTES.md", 0},
		"bundle-no-csv bundles/no-csv":                                                                 {"error", "bundles/no-csv", 0},
		"yaml-syntax abs/manifests/widget-operator-metrics.service.yaml":                               {"error", "abs/manifests/widget-operator-metrics.service.yaml", 7},
		"csv-unknown-field lint/widget.csv.yaml":                                                       {"warning", "lint/widget.csv.yaml", 18},
	}
	for k, w := range want {
		assert.Equal(t, w, got[k], k)
	}
	assert.Len(t, log.Runs[0].Results, len(got), "one result per finding, none at the same place twice here")
}

func TestSARIFEmptyRunHasResultsArray(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, WriteSARIF(&buf, NewResult(nil, Error), SARIFOptions{}))
	assert.Contains(t, buf.String(), `"results": []`)
	assert.NotContains(t, buf.String(), "null")
}

// TestSARIFSchema validates WriteSARIF's output against the SARIF 2.1.0 JSON
// schema with ajv, plus the checks GitHub code scanning makes beyond the
// schema (testdata/sarif/check.mjs). `npm ci --prefix
// internal/validate/testdata/sarif` installs the validator (.ci/run does).
func TestSARIFSchema(t *testing.T) {
	dir, err := filepath.Abs("testdata/sarif")
	require.NoError(t, err)
	node, err := exec.LookPath("node")
	missing := ""
	switch {
	case err != nil:
		missing = "node is not installed"
	case !exists(filepath.Join(dir, "node_modules", "ajv-draft-04")):
		missing = "the schema validator is not installed (run: npm ci --prefix internal/validate/testdata/sarif)"
	}
	if missing != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI: %s", missing)
		}
		t.Skipf("skipping: %s", missing)
	}
	res, base := sarifResultFixture(t)
	good := filepath.Join(t.TempDir(), "opm.sarif")
	var buf bytes.Buffer
	require.NoError(t, WriteSARIF(&buf, res, SARIFOptions{Version: "v0.0.0-test", InformationURI: "https://example.com/opm", RulesDocURI: "https://example.com/opm/docs/validation.md", BaseDir: base}))
	require.NoError(t, os.WriteFile(good, buf.Bytes(), 0o644))
	out, err := exec.Command(node, filepath.Join(dir, "check.mjs"), good).CombinedOutput()
	require.NoError(t, err, "SARIF rejected:\n%s", out)

	// The validator does reject: the same log with a level SARIF lacks.
	bad := filepath.Join(t.TempDir(), "bad.sarif")
	require.NoError(t, os.WriteFile(bad, bytes.Replace(buf.Bytes(), []byte(`"level": "warning"`), []byte(`"level": "warn"`), 1), 0o644))
	out, err = exec.Command(node, filepath.Join(dir, "check.mjs"), bad).CombinedOutput()
	require.Error(t, err, "a bad level passed:\n%s", out)
	assert.True(t, strings.Contains(string(out), "level"), "%s", out)
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
