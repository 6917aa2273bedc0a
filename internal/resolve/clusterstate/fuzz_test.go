package clusterstate

import (
	"errors"
	"os"
	"testing"

	"github.com/opmkit/opm/internal/yamldoc"
)

// fuzzSeeds are the fixtures and a few odd shapes; more seeds live in
// testdata/fuzz.
func fuzzSeeds(f *testing.F) {
	for _, name := range []string{"subscriptions.yaml", "csvs.yaml"} {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"kind: List\nitems:\n- kind: Subscription\n  spec: {name: a}\n",
		"kind: ClusterServiceVersion\nmetadata: {name: a, labels: {operators.coreos.com/a.: ''}}\n",
		"kind: List\nitems: [1, {kind: x}]\n",
		"{\"kind\": \"Subscription\", \"spec\": null}",
		"---\n---\n",
	} {
		f.Add([]byte(s))
	}
}

// Both readers take any bytes without panicking, and every failure names
// the file (a *FieldError or a *yamldoc.SyntaxError).
func checkErr(t *testing.T, err error) {
	var fe *FieldError
	var se *yamldoc.SyntaxError
	if err != nil && !errors.As(err, &fe) && !errors.As(err, &se) {
		t.Fatalf("error of type %T: %v", err, err)
	}
	if fe != nil && fe.File != "f.yaml" {
		t.Fatalf("error names %q, not the file: %v", fe.File, err)
	}
}

func FuzzReadSubscriptions(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		subs, err := ReadSubscriptions("f.yaml", data)
		checkErr(t, err)
		for _, s := range subs {
			if s.Package == "" {
				t.Fatalf("a Subscription without a package was read: %+v", s)
			}
		}
	})
}

func FuzzReadCSVs(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		csvs, err := ReadCSVs("f.yaml", data)
		checkErr(t, err)
		for _, c := range csvs {
			if c.CSV == "" {
				t.Fatalf("a CSV without a name was read: %+v", c)
			}
		}
	})
}
