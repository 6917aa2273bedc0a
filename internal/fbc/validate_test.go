package fbc

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/validate"
)

// TestValidateRules: each fixture under testdata/validate breaks one rule;
// the findings are exactly the expected rule:line pairs.
func TestValidateRules(t *testing.T) {
	cases := map[string][]string{
		"valid":           nil,
		"syntax":          {"catalog-syntax:3", "catalog-channel-bundle:2", "catalog-channel-bundle:2"}, // the bundles never came
		"package-unique":  {"catalog-package-unique:2"},
		"package-missing": {"catalog-package-missing:5", "catalog-channel-bundle:5"},
		"default-channel": {"catalog-default-channel:1"},
		"channel-unique":  {"catalog-channel-unique:3"},
		"channel-bundle":  {"catalog-channel-bundle:2"},
		"channel-edge":    {"catalog-channel-edge:2"},
		"channel-head":    {"catalog-channel-head:2"},
		"channel-cycle":   {"catalog-channel-cycle:2", "catalog-channel-head:2"},
		"bundle-unique":   {"catalog-bundle-unique:5"},
		"bundle-channel":  {"catalog-bundle-channel:5"},
		"property": {
			"catalog-property:6",  // skipRange
			"catalog-property:15", // olm.package names another package
			"catalog-property:15", // version 1.0 is not semver
			"catalog-property:15", // olm.gvk without version
			"catalog-property:15", // versionRange
			"catalog-property:15", // object data is not JSON
			"catalog-property:29", // no olm.package
		},
	}
	for name, want := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := LoadDir(filepath.Join("testdata", "validate", name))
			fs := append(LoadFindings(err), Validate(c)...)
			var got []string
			for _, f := range fs {
				got = append(got, fmt.Sprintf("%s:%d", f.Rule, f.Line))
				r, ok := validate.Lookup(f.Rule)
				if !ok {
					t.Errorf("finding of unregistered rule %s", f.Rule)
				} else if r.Scope != validate.ScopeCatalog {
					t.Errorf("rule %s is not a catalog rule", f.Rule)
				}
				if f.File != "catalog.json" && f.File != "catalog.yaml" {
					t.Errorf("finding without its file: %+v", f)
				}
				if f.Message == "" || f.Hint == "" {
					t.Errorf("finding without message or hint: %+v", f)
				}
			}
			sort.Strings(got)
			w := append([]string(nil), want...)
			sort.Strings(w)
			if strings.Join(got, " ") != strings.Join(w, " ") {
				t.Errorf("got  %v\nwant %v", got, w)
				for _, f := range fs {
					t.Logf("%s:%d %s %s", f.File, f.Line, f.Rule, f.Message)
				}
			}
		})
	}
}

// TestValidateReferenceRenders: upstream's renders of real packages are valid.
func TestValidateReferenceRenders(t *testing.T) {
	for _, db := range referenceDBs(t) {
		c, _ := renderDB(t, copyDB(t, db), RenderOptions{})
		for _, f := range Validate(c) {
			if f.Severity == validate.Error {
				t.Errorf("%s: %s %s", filepath.Base(db), f.Rule, f.Message)
			}
		}
	}
}
