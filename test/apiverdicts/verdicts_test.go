package apiverdicts

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const tags = "containers_image_openpgp containers_image_storage_stub containers_image_docker_daemon_stub"

// opmBinary is built once per test run from the checkout this module sits in.
var opmBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "apiverdicts-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opmBinary = filepath.Join(dir, "opm")
	build := exec.Command("go", "build", "-tags", tags, "-o", opmBinary, "./cmd/opm")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build opm: %v\n%s", err, out)
		os.Exit(2)
	}
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// Deliberate differences, each given with its reason in docs/validation.md
// ("Deliberate differences"; the test checks that the docs name each one).
//
// deliberate lists bundles on which opm's verdict differs from
// operator-sdk's on purpose. A listed bundle that no longer differs is a
// failure, so that the list stays true.
var deliberate = map[string]string{
	"fixture/install-mode-duplicate":                                               "upstream never detects a duplicate install mode type (its set of seen types is never filled); OLM's NewInstallModeSet refuses duplicates; opm: csv-install-modes",
	"fixture/dependency-constraint-compound":                                       "upstream's format check knows only cel constraints and refuses the compound ones (all, any, not, gvk, package) that OLM resolves; opm checks their shape",
	"fixture/object-namespace":                                                     "upstream refuses metadata.namespace on bundle objects; OLM ignores it (it creates them in the operator's namespace), so opm warns (manifest-metadata)",
	"edge/E01-no-manifests-dir/gitlab-runner-operator/1.23.1":                      "the bundle sits in certification/: upstream fails to find manifests/; opm finds and checks it, and warns (bundle-nested)",
	"edge/E02-bundle-nested-in-subdir/rabbitmq-messaging-topology-operator/1.19.1": "the bundle sits in bundle/: upstream fails to find manifests/; opm finds and checks it, and warns (bundle-nested)",
}

// stricter lists opm's error rules that operator-sdk has no counterpart
// for: a bundle operator-sdk passes and opm fails by these rules alone is a
// deliberate difference. With the corpus present, each rule must explain at
// least one difference.
var stricter = map[string]string{
	"annotations-default-channel": "the default channel is not one of the bundle's channels: an index with this bundle as head has a default channel that does not exist",
	"annotations-package":         "an invalid package name (a bidi control character, look-alike letters): not a DNS label",
	"manifest-object":             "an object without apiVersion (or with a mis-cased ApiVersion, which upstream's case-insensitive decoding reads and the API server does not)",
	"manifest-multi-document":     "OLM's unpacker installs only the first object of a file",
	"csv-replaces":                "replaces is a bare version, which never names a CSV",
	"csv-install-modes":           "an unknown install mode type, which the API server refuses",
	"yaml-duplicate-key":          "metadata.name given twice: the bundle's identity depends on the reader",
	"manifest-metadata":           "the CSV's own labels and annotations, which the API server validates like any object's and upstream does not check",
	"metadata-properties":         "upstream never reads metadata/properties.yaml; a malformed well-known property, or an olm.package property naming another package, breaks the catalog",
}

// result is one bundle's two verdicts.
type result struct {
	id          string
	dir         string
	sdk, opm    verdict
	opmFindings []string
}

func TestVerdictsAgainstOperatorSDK(t *testing.T) {
	var ids, dirs []string
	add := func(id, dir string) { ids, dirs = append(ids, id), append(dirs, dir) }

	for _, name := range fixtureNames(t) {
		add("fixture/"+name, materialize(t, name))
	}
	shared, why := sharedCorpus()
	if shared == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s under CI=true", why)
		}
		t.Logf("skipping the corpus (fixtures only): %s", why)
	} else {
		for _, set := range []string{"real", "edge"} {
			for _, d := range bundleDirs(t, filepath.Join(shared, "corpus", set)) {
				rel, _ := filepath.Rel(filepath.Join(shared, "corpus", set), d)
				add(set+"/"+filepath.ToSlash(rel), d)
			}
		}
	}

	results := make([]result, len(ids))
	for i := range ids {
		results[i] = result{id: ids[i], dir: dirs[i], sdk: upstreamVerdict(dirs[i])}
		results[i].opm, results[i].opmFindings = opmVerdict(t, dirs[i])
	}

	if shared != "" {
		checkRecorded(t, shared, results)
	}

	agree, listed, byRule := 0, 0, 0
	seen, used := map[string]bool{}, map[string]bool{}
	for _, r := range results {
		reason, isListed := deliberate[r.id]
		seen[r.id] = true
		if r.sdk.passed == r.opm.passed {
			agree++
			if isListed {
				t.Errorf("%s is listed as a deliberate difference (%s) but both now say passed=%v", r.id, reason, r.opm.passed)
			}
			continue
		}
		if isListed {
			listed++
			t.Logf("deliberate difference %s: operator-sdk passed=%v, opm passed=%v: %s", r.id, r.sdk.passed, r.opm.passed, reason)
			continue
		}
		if rules := r.opm.rules(); r.sdk.passed && allIn(rules, stricter) {
			byRule++
			for _, id := range rules {
				used[id] = true
			}
			t.Logf("deliberate difference %s: operator-sdk passes, opm fails by %s", r.id, strings.Join(rules, ", "))
			continue
		}
		t.Errorf("%s: operator-sdk passed=%v, opm passed=%v, and this is not a listed deliberate difference\noperator-sdk errors:\n  %s\nopm findings:\n  %s",
			r.id, r.sdk.passed, r.opm.passed, strings.Join(r.sdk.errors, "\n  "), strings.Join(r.opmFindings, "\n  "))
	}
	for id := range deliberate {
		if !seen[id] && (shared != "" || strings.HasPrefix(id, "fixture/")) {
			t.Errorf("deliberate difference %s names no bundle that was validated", id)
		}
	}
	if shared != "" {
		for id := range stricter {
			if !used[id] {
				t.Errorf("stricter rule %s explains no difference any more: remove it from the list and the docs", id)
			}
		}
	}
	checkDocumented(t)
	t.Logf("apiverdicts: %d bundles: %d agree, %d deliberate differences (%d listed bundles, %d by opm's stricter rules); operator-framework/api v0.45.0 default validators vs opm bundle validate",
		len(results), agree, listed+byRule, listed, byRule)
}

// rules returns the rules of the verdict's errors, each once, sorted.
func (v verdict) rules() []string {
	set := map[string]bool{}
	for _, r := range v.errorRules {
		set[r] = true
	}
	out := make([]string, 0, len(set))
	for r := range set {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}

func allIn(ids []string, m map[string]string) bool {
	for _, id := range ids {
		if _, ok := m[id]; !ok {
			return false
		}
	}
	return len(ids) > 0
}

// opmVerdict runs `opm bundle validate -o json DIR` with a clean
// environment (no config file, no OPM_* variables).
func opmVerdict(t *testing.T, dir string) (verdict, []string) {
	t.Helper()
	cmd := exec.Command(opmBinary, "bundle", "validate", "-o", "json", dir)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && !(errors.As(err, &exit) && exit.ExitCode() == 1) {
		t.Fatalf("opm bundle validate %s: %v\n%s", dir, err, out)
	}
	var res struct {
		Passed  bool `json:"passed"`
		Bundles []struct {
			Findings []struct {
				Rule, Severity, File, Message string
			} `json:"findings"`
		} `json:"bundles"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("opm bundle validate %s: %v\n%s", dir, err, out)
	}
	v := verdict{passed: res.Passed}
	var all []string
	for _, b := range res.Bundles {
		for _, f := range b.Findings {
			s := fmt.Sprintf("%s %s %s: %s", f.Severity, f.Rule, f.File, f.Message)
			all = append(all, s)
			if f.Severity == "error" {
				v.errors = append(v.errors, s)
				v.errorRules = append(v.errorRules, f.Rule)
			}
		}
	}
	return v, all
}

// checkRecorded compares the live upstream verdicts on the real corpus with
// the ones recorded from operator-sdk's own command
// (../shared/reference/api-verdicts/corpus.jsonl): the harness above must
// reproduce operator-sdk before its verdicts prove anything.
func checkRecorded(t *testing.T, shared string, results []result) {
	t.Helper()
	f, err := os.Open(filepath.Join(shared, "reference/api-verdicts/corpus.jsonl"))
	if err != nil {
		t.Fatalf("recorded verdicts: %v", err)
	}
	defer f.Close()
	recorded := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var rec struct {
			Bundle     string `json:"bundle"`
			Group      string `json:"group"`
			K8sVersion string `json:"k8sVersion"`
			Passed     bool   `json:"passed"`
		}
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("corpus.jsonl: %v", err)
		}
		if rec.Group == "default" && rec.K8sVersion == "" {
			recorded["real/"+rec.Bundle] = rec.Passed
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range results {
		want, ok := recorded[r.id]
		if !strings.HasPrefix(r.id, "real/") {
			continue
		}
		if !ok {
			t.Errorf("%s has no recorded verdict", r.id)
			continue
		}
		n++
		if r.sdk.passed != want {
			t.Errorf("%s: the harness says operator-sdk passed=%v, the recording says %v: %s", r.id, r.sdk.passed, want, strings.Join(r.sdk.errors, "; "))
		}
	}
	if n != len(recorded) {
		t.Errorf("%d real bundles validated, %d recorded", n, len(recorded))
	}
	t.Logf("the harness reproduces operator-sdk's recorded default verdict on %d real bundles", n)
}

// checkDocumented fails when the "Compared with operator-sdk" section of
// docs/validation.md does not name every deliberate difference.
func checkDocumented(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile("../../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	start, end := strings.Index(doc, "## Compared with operator-sdk"), strings.Index(doc, "\n## Rules")
	if start < 0 || end < start {
		t.Fatal(`docs/validation.md lacks the "Compared with operator-sdk" section before "Rules"`)
	}
	section := doc[start:end]
	for _, list := range []map[string]string{deliberate, stricter} {
		for id := range list {
			if !strings.Contains(section, "`"+id+"`") {
				t.Errorf("docs/validation.md (Compared with operator-sdk) does not give the deliberate difference `%s`", id)
			}
		}
	}
}

// sharedCorpus returns ../shared/corpus beside the checkout, or "" and why.
func sharedCorpus() (string, string) {
	dir, err := filepath.Abs("../../../shared")
	if err != nil {
		return "", err.Error()
	}
	if _, err := os.Stat(filepath.Join(dir, "corpus", "real")); err != nil {
		return "", fmt.Sprintf("../shared (real bundles and upstream reference outputs, placed beside the checkout; see CONTRIBUTING.md) is not available: %v", err)
	}
	return dir, ""
}

// bundleDirs lists the bundle directories of a corpus set: <package>/<version>
// under root for real, E*/<package>/<version> for edge.
func bundleDirs(t *testing.T, root string) []string {
	t.Helper()
	pattern := "*/*"
	if filepath.Base(root) == "edge" {
		pattern = "*/*/*"
	}
	matches, err := filepath.Glob(filepath.Join(root, pattern))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			out = append(out, m)
		}
	}
	sort.Strings(out)
	return out
}

// fixtureNames lists opm's validation fixtures: "valid", and each case of
// internal/validate/testdata/cases (files laid over valid).
func fixtureNames(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("../../internal/validate/testdata/cases")
	if err != nil {
		t.Fatal(err)
	}
	names := []string{"valid"}
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

// materialize writes fixture name as a bundle directory: testdata/valid
// with the case's files laid over it, as the validate package's tests read it.
func materialize(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	roots := []string{"../../internal/validate/testdata/valid"}
	if name != "valid" {
		roots = append(roots, filepath.Join("../../internal/validate/testdata/cases", name))
	}
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dst, rel)), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}
