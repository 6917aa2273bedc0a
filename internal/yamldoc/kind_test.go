package yamldoc

import (
	"encoding/json"
	"testing"
)

func TestKindOf(t *testing.T) {
	t.Parallel()
	for doc, want := range map[string]string{
		`null`: "null", `{"a":1}`: "an object", `[1]`: "a list", `"s"`: "a string", `true`: "a boolean", `1.5`: "a number",
	} {
		var v any
		if err := json.Unmarshal([]byte(doc), &v); err != nil {
			t.Fatal(err)
		}
		if got := KindOf(v); got != want {
			t.Errorf("KindOf(%s) = %q, want %q", doc, got, want)
		}
	}
}
