package validate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestWriteJSONShape(t *testing.T) {
	var buf bytes.Buffer
	r := &Result{Bundles: []BundleReport{
		{Path: "a", Name: "a.v1.0.0"}, // nil findings
		{Path: "b", Findings: []Finding{{Rule: "yaml-syntax", Severity: Error, Message: "m"}}},
	}}
	if err := WriteJSON(&buf, r); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Passed  bool
		Bundles []struct {
			Path, Name string
			Findings   []map[string]any
		}
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"findings": []`) {
		t.Errorf("nil findings must be an empty array:\n%s", buf.String())
	}
	f := doc.Bundles[1].Findings[0]
	for _, k := range []string{"rule", "severity", "file", "line", "field", "message", "hint"} {
		if _, ok := f[k]; !ok {
			t.Errorf("key %q missing: %v", k, f)
		}
	}
	if f["severity"] != "error" {
		t.Errorf("severity = %v", f["severity"])
	}

	buf.Reset()
	if err := WriteJSON(&buf, &Result{Passed: true}); err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(buf.String()) != "{\n  \"passed\": true,\n  \"bundles\": []\n}" {
		t.Errorf("empty result: %s", buf.String())
	}
}

func TestWriteText(t *testing.T) {
	r := NewResult([]BundleReport{
		{Path: "ok", Name: "ok.v1.0.0"},
		{Path: "bad", Name: "bad.v1.0.0", Findings: []Finding{
			{Rule: "r2", Severity: Warning, File: "manifests/csv.yaml", Line: 3, Field: "spec.x", Message: "w", Hint: "h"},
			{Rule: "r1", Severity: Error, File: "manifests/csv.yaml", Line: 9, Message: "e"},
			{Rule: "r0", Severity: Error, Message: "whole bundle"},
		}},
		{Path: "warn", Findings: []Finding{{Rule: "r3", Severity: Info, File: "f", Message: "i"}}},
	}, Error)
	if r.Passed {
		t.Fatal("an error fails the run")
	}
	var buf bytes.Buffer
	if err := WriteText(&buf, r, TextOptions{FailOn: Error}); err != nil {
		t.Fatal(err)
	}
	want := `✓ ok (ok.v1.0.0)
✗ bad (bad.v1.0.0)
  error   r0
          whole bundle
  manifests/csv.yaml
    warning r2  manifests/csv.yaml:3 spec.x
            w
            hint: h
    error   r1  manifests/csv.yaml:9
            e
! warn
  f
    info    r3  f
            i
3 bundles, 2 errors, 1 warning, 1 info — failed
`
	if buf.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", buf.String(), want)
	}
	if s := Summary(&Result{Passed: true}, "file", Warning, Styles{}); s != "0 files, 0 errors, 0 warnings, 0 infos — passed (failing on warnings and above)" {
		t.Errorf("summary: %s", s)
	}
}
