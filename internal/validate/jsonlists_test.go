package validate

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestReportListsAreNeverNull(t *testing.T) {
	for _, v := range []any{Result{}, &Result{Bundles: []BundleReport{{Path: "x"}}}, BundleReport{}} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(b, []byte("null")) {
			t.Errorf("%T: %s", v, b)
		}
	}
	var buf bytes.Buffer
	if err := WriteJSON(&buf, &Result{}); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(buf.Bytes(), []byte("null")) {
		t.Errorf("WriteJSON: %s", buf.String())
	}
	// Text with < and > stays as written in a report marshalled directly
	// by an encoder that does not escape HTML.
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(BundleReport{Findings: []Finding{{Hint: "name it <operator>.v<version>"}}}); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(out.Bytes(), []byte("<operator>")) {
		t.Errorf("escaped: %s", out.String())
	}
}
