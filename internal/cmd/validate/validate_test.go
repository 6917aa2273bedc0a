package validate_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/cmd/cmdtest"
)

func write(t *testing.T, dir, name, content string) {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

const goodCatalog = `{"schema":"olm.package","name":"p","defaultChannel":"stable"}
{"schema":"olm.channel","name":"stable","package":"p","entries":[{"name":"p.v1.0.0"}]}
{"schema":"olm.bundle","name":"p.v1.0.0","package":"p","image":"example.com/p-bundle:1.0.0","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}]}
`

func TestValidateGoodCatalog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "p/catalog.json", goodCatalog)
	r := cmdtest.New(t).Run("validate", dir)
	if r.Code != 0 || !strings.Contains(r.ErrOut, "passed") {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
}

// TestValidateFindings: problems come out as findings with rule, severity,
// file and line in every format, and fail the run with exit status 1.
func TestValidateFindings(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "p/catalog.json", strings.Replace(goodCatalog, `"defaultChannel":"stable"`, `"defaultChannel":"fast"`, 1))
	write(t, dir, "q/catalog.yaml", "schema: olm.package\nname: q\n  bad: [\n")
	o := cmdtest.New(t)

	r := o.Run("validate", dir)
	if r.Code != 1 || !strings.Contains(r.ErrOut, "catalog-default-channel") || !strings.Contains(r.ErrOut, "catalog-syntax") {
		t.Fatalf("text: exit %d: %s", r.Code, r.ErrOut)
	}

	r = o.Run("validate", dir, "-o", "json")
	if r.Code != 1 {
		t.Fatalf("json: exit %d: %s", r.Code, r.ErrOut)
	}
	doc := cmdtest.DecodeReport(t, r.Out)
	byRule := map[string]map[string]any{}
	for _, f := range cmdtest.Findings(doc, 0) {
		byRule[f["rule"].(string)] = f
	}
	dc := byRule["catalog-default-channel"]
	if dc == nil || dc["file"] != "p/catalog.json" || fmt.Sprint(dc["line"]) != "1" || dc["severity"] != "error" || dc["hint"] == "" {
		t.Errorf("catalog-default-channel finding: %v", dc)
	}
	if s := byRule["catalog-syntax"]; s == nil || s["file"] != "q/catalog.yaml" {
		t.Errorf("catalog-syntax finding: %v", s)
	}

	r = o.Run("validate", dir, "-o", "sarif")
	if r.Code != 1 {
		t.Fatalf("sarif: exit %d: %s", r.Code, r.ErrOut)
	}
	var sarif struct {
		Version string `json:"version"`
		Runs    []struct {
			Results []struct {
				RuleID string `json:"ruleId"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal([]byte(r.Out), &sarif); err != nil || sarif.Version != "2.1.0" || len(sarif.Runs) != 1 || len(sarif.Runs[0].Results) < 2 {
		t.Fatalf("sarif: %v %.300s", err, r.Out)
	}

	if r := o.Run("validate", dir, "--skip", "catalog-default-channel,catalog-syntax"); r.Code != 0 {
		t.Errorf("--skip: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("validate", dir, "--select", "no-such-rule"); r.Code != 2 {
		t.Errorf("--select of an unknown rule: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("validate", dir, "-o", "xml"); r.Code != 2 || !strings.Contains(r.ErrOut, "sarif") {
		t.Errorf("-o xml: exit %d: %s", r.Code, r.ErrOut)
	}
}

func TestValidateUnreadable(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	if r := o.Run("validate", filepath.Join(t.TempDir(), "nope")); r.Code != 2 || !strings.Contains(r.ErrOut, "nope") {
		t.Errorf("missing directory: exit %d: %s", r.Code, r.ErrOut)
	}
	file := filepath.Join(t.TempDir(), "f.json")
	write(t, filepath.Dir(file), "f.json", "{}")
	if r := o.Run("validate", file); r.Code != 2 || !strings.Contains(r.ErrOut, "not a directory") {
		t.Errorf("a file: exit %d: %s", r.Code, r.ErrOut)
	}
}
