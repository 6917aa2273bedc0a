package apiverdicts

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	apimanifests "github.com/operator-framework/api/pkg/manifests"
	apivalidation "github.com/operator-framework/api/pkg/validation"
	validator "github.com/operator-framework/api/pkg/validation/interfaces"
)

const (
	gatesCSV  = "manifests/widget-operator.clusterserviceversion.yaml"
	gatesCRD  = "manifests/widgets.example.com.crd.yaml"
	gatesIcon = "  icon:\n  - base64data: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=\n    mediatype: image/svg+xml\n"
)

// hubFixture is internal/validate/testdata/gates with edits: each file's
// old text replaced by new.
type hubFixture struct {
	name  string
	edits [][3]string // file, old, new
	k8s   string
	// categories, when set, is written to a file OPERATOR_BUNDLE_CATEGORIES
	// names, for both sides.
	categories string
}

var hubFixtures = []hubFixture{
	{name: "gates"},
	{name: "no-provider", edits: [][3]string{{gatesCSV, "  provider:\n    name: Example\n", ""}}},
	{name: "maintainer-no-email", edits: [][3]string{{gatesCSV, "    email: widgets@example.com\n", ""}}},
	{name: "maintainer-bad-email", edits: [][3]string{{gatesCSV, "widgets@example.com", "widgets at example"}}},
	{name: "link-no-name", edits: [][3]string{{gatesCSV, "  - name: Docs\n", "  - name: ''\n"}}},
	{name: "link-bad-url", edits: [][3]string{{gatesCSV, "https://example.com/docs", "example docs"}}},
	{name: "no-icon", edits: [][3]string{{gatesCSV, gatesIcon, ""}}},
	{name: "icon-empty-list", edits: [][3]string{{gatesCSV, gatesIcon, "  icon: []\n"}}},
	{name: "two-icons", edits: [][3]string{{gatesCSV, gatesIcon, gatesIcon + gatesIcon[len("  icon:\n"):]}}},
	{name: "icon-media-type", edits: [][3]string{{gatesCSV, "mediatype: image/svg+xml", "mediatype: image/webp"}}},
	{name: "icon-no-data", edits: [][3]string{{gatesCSV, "base64data: PHN2ZyB4bWxucz0iaHR0cDovL3d3dy53My5vcmcvMjAwMC9zdmciLz4=", "base64data: ''"}}},
	{name: "capability-typo", edits: [][3]string{{gatesCSV, "capabilities: Basic Install", "capabilities: Basic install"}}},
	{name: "category-unknown", edits: [][3]string{{gatesCSV, "categories: Developer Tools, Monitoring", "categories: Developer Tools, Widgets"}}},
	{name: "category-custom-ok", edits: [][3]string{{gatesCSV, "categories: Developer Tools, Monitoring", "categories: Gadgets, Widgets"}}, categories: `{"categories": ["Gadgets", "Widgets"]}`},
	{name: "category-custom-bad", edits: [][3]string{{gatesCSV, "categories: Developer Tools, Monitoring", "categories: Developer Tools"}}, categories: `{"categories": ["Gadgets"]}`},
	{name: "requests-partial", edits: [][3]string{{gatesCSV, "                    memory: 64Mi\n", ""}}},
	{name: "requests-none", edits: [][3]string{{gatesCSV, "                resources:\n                  requests:\n                    cpu: 10m\n                    memory: 64Mi\n", ""}}},
	{name: "crd-description", edits: [][3]string{{gatesCSV, "      description: A widget the operator keeps running.\n", ""}}},
	{name: "crd-rbac", edits: [][3]string{{gatesCSV, `        - apiGroups: ["example.com"]`, "        - apiGroups: [\"apiextensions.k8s.io\"]\n          resources: [\"customresourcedefinitions\"]\n          verbs: [\"create\"]\n        - apiGroups: [\"example.com\"]"}}},
	{name: "min-kube-missing", edits: [][3]string{{gatesCSV, "  minKubeVersion: 1.25.0\n", ""}}},
	{name: "min-kube-invalid", edits: [][3]string{{gatesCSV, "minKubeVersion: 1.25.0", "minKubeVersion: v1.25"}}},
	{name: "name-convention", edits: [][3]string{{gatesCSV, "name: widget-operator.v1.2.0", "name: widget-operator-1.2.0"}}},
	{name: "removed-api-1.25", k8s: "1.25", edits: [][3]string{{gatesCRD, "apiVersion: apiextensions.k8s.io/v1\n", "apiVersion: apiextensions.k8s.io/v1beta1\n"}}},
}

// runHubFixtures compares both sides on each fixture, live; it returns how
// many fixtures it ran.
func runHubFixtures(t *testing.T, st *hubStats) int {
	t.Helper()
	for _, fx := range hubFixtures {
		dir := materializeGates(t, fx)
		var env []string
		if fx.categories != "" {
			file := filepath.Join(t.TempDir(), "categories.json")
			if err := os.WriteFile(file, []byte(fx.categories), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("OPERATOR_BUNDLE_CATEGORIES", file)
			env = append(env, "OPERATOR_BUNDLE_CATEGORIES="+file)
		} else {
			t.Setenv("OPERATOR_BUNDLE_CATEGORIES", "")
		}
		opm := opmHubFindings(t, []string{dir}, fx.k8s, env)[dir]
		for _, group := range []string{"suite=operatorframework", "operatorhub"} {
			passed, up := upstreamHub(t, dir, group, fx.k8s)
			st.compare(t, fmt.Sprintf("fixture/%s (%s, live)", fx.name, group), group, passed, up, opm)
		}
	}
	return len(hubFixtures)
}

// upstreamHub runs a group's optional validators on dir as operator-sdk
// does (the bundle loaded from its manifests directory). A panic is a
// failure without findings: the command crashes.
func upstreamHub(t *testing.T, dir, group, k8s string) (passed bool, f findings) {
	t.Helper()
	manifestsDir, err := manifestsDirOf(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := apimanifests.GetBundleFromDir(manifestsDir)
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	// name=operatorhub selects the deprecated validator, which the
	// community pipelines still run.
	validators := []validator.Validator{apivalidation.OperatorHubValidator} //nolint:staticcheck // the deprecated validator is what is compared
	if group == "suite=operatorframework" {
		validators = []validator.Validator{apivalidation.OperatorHubV2Validator, apivalidation.StandardCapabilitiesValidator,
			apivalidation.StandardCategoriesValidator, apivalidation.GoodPracticesValidator, apivalidation.AlphaDeprecatedAPIsValidator}
	}
	rec := recordedEntry{Bundle: filepath.Base(dir), Group: group}
	defer func() {
		if p := recover(); p != nil {
			passed, f = false, findings{}
			t.Logf("%s (%s): upstream panics: %v", filepath.Base(dir), group, p)
		}
	}()
	for _, v := range validators {
		for _, r := range v.Validate(b, map[string]string{"k8s-version": k8s}) {
			for _, e := range r.Errors {
				rec.Errors = append(rec.Errors, struct {
					Detail string `json:"detail"`
				}{e.Detail})
			}
			for _, w := range r.Warnings {
				rec.Warnings = append(rec.Warnings, struct {
					Detail string `json:"detail"`
				}{w.Detail})
			}
		}
	}
	return len(rec.Errors) == 0, upstreamFindings(t, rec)
}

// materializeGates writes testdata/gates with the fixture's edits.
func materializeGates(t *testing.T, fx hubFixture) string {
	t.Helper()
	src := "../../internal/validate/testdata/gates"
	dst := filepath.Join(t.TempDir(), fx.name)
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		text := string(data)
		for _, e := range fx.edits {
			if e[0] == filepath.ToSlash(rel) {
				if !strings.Contains(text, e[1]) {
					t.Fatalf("fixture %s: %s lacks %q", fx.name, rel, e[1])
				}
				text = strings.Replace(text, e[1], e[2], 1)
			}
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), []byte(text), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}
