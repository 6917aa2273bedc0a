package registry

import (
	"reflect"
	"testing"
)

// TestSplitLinesAgreesWithDecoder: the one-object-a-line fast path finds
// the objects and the CSV the JSON decoder finds, and leaves to it every
// column it cannot read plainly.
func TestSplitLinesAgreesWithDecoder(t *testing.T) {
	csv := `{"apiVersion":"operators.coreos.com/v1alpha1","kind":"ClusterServiceVersion","metadata":{"name":"op.v1.0.0"},"spec":{}}`
	crd := `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition","metadata":{"name":"ws.x.io"},"spec":{"d":"kind: ClusterServiceVersion"}}`
	mention := `{"kind":"ConfigMap","metadata":{"name":"c"},"data":{"k":"\"ClusterServiceVersion\""}}`
	for _, tc := range []struct {
		name, content string
		fast          bool
	}{
		{"csv first", csv + "\n" + crd + "\n", true},
		{"csv last", crd + "\n" + mention + "\n" + csv + "\n", true},
		{"no trailing newline", crd + "\n" + csv, true},
		{"pretty", "{\n \"kind\": \"ClusterServiceVersion\",\n \"metadata\": {\"name\": \"op\"}\n}\n", false},
		{"two a line", crd + csv + "\n", false},
		{"nameless csv", `{"kind":"ClusterServiceVersion","metadata":{}}` + "\n" + csv + "\n", false},
		{"no csv", crd + "\n", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fast, ok := splitLines(tc.content)
			if ok != tc.fast {
				t.Fatalf("fast path taken: %v, want %v", ok, tc.fast)
			}
			slow, err := decodeManifests(tc.content)
			if !ok {
				return
			}
			if err != nil {
				t.Fatalf("decoder: %v", err)
			}
			if !reflect.DeepEqual(fast, slow) {
				t.Errorf("fast %+v, decoder %+v", fast, slow)
			}
			if got := tc.content[fast.bounds[fast.csv][0]:fast.bounds[fast.csv][1]]; got != csv {
				t.Errorf("csv %q", got)
			}
		})
	}
}
