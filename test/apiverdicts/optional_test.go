package apiverdicts

import (
	"path/filepath"
	"testing"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	validator "github.com/operator-framework/api/pkg/validation/interfaces"
)

// TestEmptyIconPanicsOnlyOutsideTheDefaultSet pins where upstream's
// `icon: []` panic is, as docs/validation.md says: operator-framework/api's
// optional OperatorHub validators index the first icon without checking
// that there is one, while the default set (fixture/icon-empty-list, an
// agreement) never reads icons. When upstream fixes it, this fails and the
// docs need the news.
func TestEmptyIconPanicsOnlyOutsideTheDefaultSet(t *testing.T) {
	dir := materialize(t, "icon-empty-list")
	b, err := apimanifests.GetBundleFromDir(filepath.Join(dir, "manifests"))
	if err != nil {
		t.Fatal(err)
	}
	panics := func(v validator.Validator) (p any) {
		defer func() { p = recover() }()
		v.Validate(b)
		return nil
	}
	for name, v := range map[string]validator.Validator{"operatorhub": apivalidation.OperatorHubValidator, "operatorhubv2": apivalidation.OperatorHubV2Validator} {
		if p := panics(v); p == nil {
			t.Errorf("the optional %s validator no longer panics on icon: []: update docs/validation.md", name)
		} else {
			t.Logf("optional %s validator on icon: []: panic: %v", name, p)
		}
	}
	if v := upstreamVerdict(dir); !v.passed {
		t.Errorf("default validation fails icon: []: %v", v.errors)
	}
}
