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

// TestValidateMachineFormats: -o yaml is the json report in YAML; -o
// upstream-json and -o upstream-yaml are upstream's {passed, error.message}
// documents, byte for byte as upstream prints them for a passing catalog.
func TestValidateMachineFormats(t *testing.T) {
	t.Parallel()
	good := t.TempDir()
	write(t, good, "p/catalog.json", goodCatalog)
	bad := t.TempDir()
	write(t, bad, "p/catalog.json", goodCatalog+`{"schema":"olm.deprecations","package":"p","entries":[{"reference":{"schema":"olm.bundle","name":"p.v0.9.0"},"message":"old"}]}`+"\n")
	o := cmdtest.New(t)

	r := o.Run("validate", good, "-o", "upstream-json")
	if r.Code != 0 || r.Out != "{\n  \"passed\": true\n}\n" {
		t.Errorf("upstream-json, good: exit %d, stdout %q", r.Code, r.Out)
	}
	r = o.Run("validate", good, "-o", "upstream-yaml")
	if r.Code != 0 || r.Out != "passed: true\n\n" {
		t.Errorf("upstream-yaml, good: exit %d, stdout %q", r.Code, r.Out)
	}

	r = o.Run("validate", bad, "-o", "upstream-json")
	var doc struct {
		Passed *bool `json:"passed"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil || r.Code != 1 || doc.Passed == nil || *doc.Passed {
		t.Fatalf("upstream-json, bad: exit %d, %v, stdout %s", r.Code, err, r.Out)
	}
	if want := "p/catalog.json:4: catalog-deprecation-reference: entries[0].reference.name: package p: deprecation entry 0 references bundle \"p.v0.9.0\""; !strings.HasPrefix(doc.Error.Message, want) {
		t.Errorf("message %q, want prefix %q", doc.Error.Message, want)
	}
	r = o.Run("validate", bad, "-o", "upstream-yaml")
	if r.Code != 1 || !strings.HasPrefix(r.Out, "error:\n  message: 'p/catalog.json:4: catalog-deprecation-reference:") || !strings.Contains(r.Out, "\npassed: false\n") {
		t.Errorf("upstream-yaml, bad: exit %d, stdout %s", r.Code, r.Out)
	}

	r = o.Run("validate", bad, "-o", "yaml")
	if r.Code != 1 || !strings.HasPrefix(r.Out, "bundles:\n") || !strings.Contains(r.Out, "rule: catalog-deprecation-reference\n") || !strings.Contains(r.Out, "\npassed: false\n") {
		t.Errorf("yaml, bad: exit %d, stdout %s", r.Code, r.Out)
	}
	if r := o.Run("validate", good, "-o", "yaml"); r.Code != 0 || !strings.Contains(r.Out, "passed: true\n") {
		t.Errorf("yaml, good: exit %d, stdout %s", r.Code, r.Out)
	}
}

// TestValidateLimits: a blob over --max-blob-size is a finding naming file
// and line (exit 1), not a crash; within the limit the catalog is checked.
func TestValidateLimits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := `{"schema":"example.com/big","value":"` + strings.Repeat("a", 2<<20) + `"}`
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), []byte("{\"schema\":\"example.com/small\"}\n"+big+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := cmdtest.New(t)
	r := o.Run("validate", dir, "--max-blob-size", "1MiB")
	if r.Code != 1 || !strings.Contains(r.ErrOut, "catalog.json") || !strings.Contains(r.ErrOut, "--max-blob-size") || !strings.Contains(r.ErrOut, ":2") {
		t.Errorf("blob over the limit: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("validate", dir, "--max-blob-size", "4MiB"); r.Code != 0 {
		t.Errorf("within the limit: exit %d: %s", r.Code, r.ErrOut)
	}
	if r := o.Run("validate", dir, "--max-file-size", "lots"); r.Code != 2 || !strings.Contains(r.ErrOut, "want a size") {
		t.Errorf("bad size: exit %d: %s", r.Code, r.ErrOut)
	}
}

// TestValidateNoCatalog: a directory that holds no catalog fails (upstream
// fails too) and says why, rather than passing with 0 errors: an empty
// directory, a directory of other files (docs/), and an empty catalog.yaml
// left by a failed `opm render-template ... > catalog.yaml`.
func TestValidateNoCatalog(t *testing.T) {
	t.Parallel()
	o := cmdtest.New(t)
	empty := t.TempDir()
	docs := t.TempDir()
	write(t, docs, "README.md", "# not a catalog\n")
	emptyFile := t.TempDir()
	write(t, emptyFile, "catalog.yaml", "")
	for _, tc := range []struct{ dir, want string }{
		{empty, "it has no files"},
		{docs, "it has no JSON or YAML file (README.md skipped: neither)"},
		{emptyFile, "its JSON and YAML files (catalog.yaml) hold no blobs"},
	} {
		r := o.Run("validate", tc.dir)
		if r.Code != 1 || !strings.Contains(r.ErrOut, "catalog-empty") || !strings.Contains(r.ErrOut, tc.want) || !strings.Contains(r.ErrOut, "holds no file-based catalog") {
			t.Errorf("validate %s: exit %d: %s", tc.dir, r.Code, r.ErrOut)
		}
	}
	r := o.Run("validate", emptyFile, "-o", "upstream-json")
	if r.Code != 1 || !strings.Contains(r.Out, `"passed": false`) {
		t.Errorf("upstream-json: exit %d: %s %s", r.Code, r.Out, r.ErrOut)
	}
}

// TestValidateSyntaxErrorFirst: the syntax error that hides a channel blob
// is listed before what it causes (no channel for the default, a bundle in
// no channel), though it is further down the file.
func TestValidateSyntaxErrorFirst(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines := strings.SplitAfter(goodCatalog, "\n")
	write(t, dir, "p/catalog.json", lines[0]+lines[2]+"{\n  \"schema\": \"olm.channel\",\n  \"name\": \"stable\",\n  oops\n}\n")
	r := cmdtest.New(t).Run("validate", dir, "-o", "json")
	if r.Code != 1 {
		t.Fatalf("exit %d: %s", r.Code, r.ErrOut)
	}
	fs := cmdtest.Findings(cmdtest.DecodeReport(t, r.Out), 0)
	if len(fs) < 2 || fs[0]["rule"] != "catalog-syntax" || fmt.Sprint(fs[0]["line"]) != "6" {
		t.Errorf("the syntax error should come first: %v", fs)
	}
}

// TestValidateManyCatalogs (issue 31, item 2): opm validate catalogs/*
// checks each catalog in one run, a line and a verdict per catalog, and
// fails when one fails; -o json has a report per catalog.
func TestValidateManyCatalogs(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	good, bad := filepath.Join(root, "v4.16"), filepath.Join(root, "v4.17")
	write(t, good, "p/catalog.json", goodCatalog)
	write(t, bad, "p/catalog.json", strings.Replace(goodCatalog, `"defaultChannel":"stable"`, `"defaultChannel":"fast"`, 1))
	o := cmdtest.New(t)

	r := o.Run("validate", good, bad)
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1: %s", r.Code, r.ErrOut)
	}
	for _, want := range []string{"✓ " + good + "\n", "✗ " + bad + "\n", "2 catalogs, 1 error"} {
		if !strings.Contains(r.ErrOut, want) {
			t.Errorf("missing %q in:\n%s", want, r.ErrOut)
		}
	}
	r = o.Run("validate", good, good)
	if r.Code != 0 || !strings.Contains(r.ErrOut, "2 catalogs, 0 errors") {
		t.Errorf("two good catalogs: exit %d: %s", r.Code, r.ErrOut)
	}
	r = o.Run("validate", good, bad, "-o", "json")
	var doc struct {
		Passed  bool `json:"passed"`
		Bundles []struct {
			Path     string           `json:"path"`
			Findings []map[string]any `json:"findings"`
		} `json:"bundles"`
	}
	if err := json.Unmarshal([]byte(r.Out), &doc); err != nil {
		t.Fatalf("%v: %s", err, r.Out)
	}
	if doc.Passed || len(doc.Bundles) != 2 || doc.Bundles[0].Path != good || len(doc.Bundles[0].Findings) != 0 || len(doc.Bundles[1].Findings) != 1 {
		t.Errorf("json report: %+v", doc)
	}
	r = o.Run("validate", good, filepath.Join(root, "nope"))
	if r.Code != 2 || !strings.Contains(r.ErrOut, "nope") {
		t.Errorf("a missing catalog: exit %d: %s", r.Code, r.ErrOut)
	}
}
