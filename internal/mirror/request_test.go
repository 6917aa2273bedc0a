package mirror

import (
	"strings"
	"testing"
)

func TestRequestCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		r    Request
		want string // "" for no error
	}{
		{"catalog to registry", Request{Catalog: "q.io/a/i:1", To: "m.example/olm", Concurrency: 1}, ""},
		{"config to dir", Request{Config: "isc.yaml", ToDir: "d", Concurrency: 1}, ""},
		{"from dir", Request{FromDir: "d", To: "m.example", Concurrency: 1}, ""},
		{"catalog and from-dir", Request{Catalog: "q.io/a/i:1", FromDir: "d", To: "m.example", Concurrency: 1}, "not both"},
		{"config and catalog", Request{Catalog: "q.io/a/i:1", Config: "isc.yaml", To: "m.example", Concurrency: 1}, "--config"},
		{"config and from-dir", Request{Config: "isc.yaml", FromDir: "d", To: "m.example", Concurrency: 1}, "without --config"},
		{"from-dir without to", Request{FromDir: "d", Concurrency: 1}, "--from-dir needs --to"},
		{"nothing", Request{To: "m.example", Concurrency: 1}, "give the catalog image"},
		{"both targets", Request{Catalog: "c", To: "m.example", ToDir: "d", Concurrency: 1}, "--to or --to-dir, not both"},
		{"no target", Request{Catalog: "c", Concurrency: 1}, "give --to"},
		{"concurrency", Request{Catalog: "c", To: "m.example"}, "--concurrency"},
		{"scheme", Request{Catalog: "c", To: "https://m.example", Concurrency: 1}, "without a scheme"},
		{"nested to a dir", Request{Catalog: "c", ToDir: "d", MaxNestedPaths: 2, Concurrency: 1}, "applies to --to"},
		{"prefix too deep", Request{Catalog: "c", To: "m.example/a/b", MaxNestedPaths: 2, Concurrency: 1}, "leaves none"},
	} {
		err := tc.r.Check()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want one saying %q", tc.name, err, tc.want)
		}
	}
}
