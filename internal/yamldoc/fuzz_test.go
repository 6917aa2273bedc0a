package yamldoc

import "testing"

// FuzzDecode feeds arbitrary bytes to Decode: it may not panic or hang, and
// every failure must be a *SyntaxError. Seeds live in testdata/fuzz/FuzzDecode
// as well as below.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		"a: 1\n---\nb: [1, 2]\n",
		"a: &x {b: *x}\n",
		"- =\n- on\n- 0x1f\n- 2020-01-01\n",
		"{\"apiVersion\": \"v1\", \"kind\": \"Service\"}",
		"a: [1,\n b: c\n",
		"<<: {a: 1}\nb: 2\n",
	} {
		f.Add("x.yaml", []byte(s))
		f.Add("x.json", []byte(s))
	}
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		docs, err := Decode(name, data)
		if err != nil {
			if _, ok := err.(*SyntaxError); !ok {
				t.Fatalf("error of type %T, want *SyntaxError: %v", err, err)
			}
			return
		}
		for _, d := range docs {
			d.LineOf("spec.installModes[0].type")
		}
	})
}
