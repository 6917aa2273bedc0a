package apiverdicts

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// upstreamRules maps operator-framework/api's optional validators'
// messages (by a fragment of their text) to the opm rule that checks the
// same thing. A message matching none fails the test: a new upstream check
// needs a rule, or a line here saying why it has none.
var upstreamRules = []struct{ fragment, rule string }{
	{"csv.Spec.Provider.Name", "operatorhub-provider"},
	{"csv.Spec.Maintainers", "operatorhub-maintainers"},
	{"csv.Spec.Links", "operatorhub-links"},
	{"csv.Spec.Icon", "operatorhub-icon"},
	{"csv.Spec.Version must be set", "csv-version"},
	{"minKubeVersion is not informed", "csv-min-kube-version-missing"},
	{"MinKubeVersion has an invalid value", "csv-min-kube-version-format"},
	{"csv.Metadata.Annotations.Capabilities", "operatorhub-capabilities"},
	{`csv.Metadata.Annotations["categories"]`, "operatorhub-categories"},
	{"deprecated and removed in", "k8s-removed-api"},
	{"unable to find the resource requests", "operatorhub-resource-requests"},
	{"has an empty description", "operatorhub-crd-descriptions"},
	{"recommended naming convention: https://olm.operatorframework.io", "operatorhub-channel-naming"},
	{"permissions to create CRD", "operatorhub-crd-rbac"},
	{"csv.metadata.Name", "csv-name-convention"},
	{"unable to find a deployment to install", "csv-deployments"},
	// The deprecated "operatorhub" validator says it is deprecated on
	// every bundle: not a finding about the bundle.
	{`The "operatorhub" validator is deprecated`, ""},
}

// groupRules are the opm rules each recorded group's validators cover:
// a finding of another rule is no difference with that group.
var groupRules = map[string][]string{
	// name=operatorhub: the deprecated OperatorHub validator alone.
	"operatorhub": {"operatorhub-provider", "operatorhub-maintainers", "operatorhub-links", "operatorhub-icon",
		"operatorhub-capabilities", "operatorhub-categories", "csv-version", "csv-min-kube-version-missing",
		"csv-min-kube-version-format", "k8s-removed-api"},
	// suite=operatorframework: operatorhubv2, capabilities, categories,
	// good-practices and alpha-deprecated-apis.
	"suite=operatorframework": {"operatorhub-provider", "operatorhub-maintainers", "operatorhub-links", "operatorhub-icon",
		"operatorhub-capabilities", "operatorhub-categories", "csv-version", "csv-min-kube-version-missing",
		"csv-min-kube-version-format", "k8s-removed-api", "operatorhub-resource-requests", "operatorhub-crd-descriptions",
		"operatorhub-channel-naming", "operatorhub-crd-rbac", "csv-name-convention", "csv-deployments"},
}

// hubDifference is a deliberate rule-by-rule difference: opm reports the
// rule at this severity on a bundle and upstream does not (opmOnly), or
// the reverse, and applies says, from the messages, that this is the
// upstream bug named, not a new disagreement. Each is given in
// docs/validation.md (section "Compared with operator-sdk's OperatorHub
// validators") and must explain at least one difference of the corpus.
type hubDifference struct {
	id       string
	rule     string
	severity string
	opmOnly  bool
	applies  func(messages []string) bool
	reason   string
}

var hubDifferences = []hubDifference{
	{id: "channels-never-read", rule: "operatorhub-channel-naming", severity: "warning", opmOnly: true,
		applies: func([]string) bool { return true },
		reason:  "operator-sdk loads the bundle from manifests/, so its good-practices validator never sees metadata/annotations.yaml's channels and never warns"},
	{id: "partial-requests", rule: "operatorhub-resource-requests", severity: "warning", opmOnly: true,
		applies: func(ms []string) bool { return allContain(ms, "requests no cpu", "requests no memory") },
		reason:  "upstream warns only about a container without requests; one that requests cpu or memory alone passes, and a ResourceQuota refuses it just the same"},
	{id: "prerelease-min-kube", rule: "csv-min-kube-version-format", severity: "warning", opmOnly: true,
		applies: func(ms []string) bool { return allContain(ms, "pre-release or build suffix") },
		reason:  "minKubeVersion 1.28.0-0 parses, but a pre-release sorts below 1.28.0: opm warns, upstream accepts it"},
	{id: "icon-empty-crash", rule: "operatorhub-icon", severity: "error", opmOnly: true,
		applies: func(ms []string) bool { return allContain(ms, "empty list") },
		reason:  "on icon: [] upstream indexes the first icon of an empty list and crashes (both fail the bundle); opm reports it"},
	{id: "psp-rbac-not-an-api", rule: "k8s-removed-api", severity: "warning", opmOnly: false,
		applies: func(ms []string) bool { return allContain(ms, "podsecuritypolicies") },
		reason:  "upstream takes an RBAC rule naming podsecuritypolicies for a manifest using a removed API; RBAC rules name no API version, and granting a resource is no object the cluster refuses"},
}

// allContain reports whether every message holds one of the fragments.
func allContain(msgs []string, fragments ...string) bool {
	for _, m := range msgs {
		ok := false
		for _, f := range fragments {
			ok = ok || strings.Contains(m, f)
		}
		if !ok {
			return false
		}
	}
	return len(msgs) > 0
}

// recordedEntry is one line of corpus.jsonl.
type recordedEntry struct {
	Bundle     string `json:"bundle"`
	Group      string `json:"group"`
	K8sVersion string `json:"k8sVersion"`
	Passed     bool   `json:"passed"`
	Errors     []struct {
		Detail string `json:"detail"`
	} `json:"errors"`
	Warnings []struct {
		Detail string `json:"detail"`
	} `json:"warnings"`
}

// TestOperatorHubVerdicts compares `opm bundle validate --select
// operatorhub` with operator-framework/api v0.45.0's optional OperatorHub
// validators (operator-sdk's --select-optional suite=operatorframework and
// name=operatorhub): live on fixtures (testdata/gates with one thing
// broken each, see hubFixtures), and as recorded on every real bundle of
// ../shared/corpus, with no Kubernetes version and with 1.25. It compares
// the verdict of each bundle, then rule by rule each (rule, severity)
// either side reports. Every difference must be a listed deliberate one.
func TestOperatorHubVerdicts(t *testing.T) {
	st := &hubStats{explained: map[string]int{}}
	fixtures := runHubFixtures(t, st)

	shared, why := sharedCorpus()
	if shared == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s under CI=true", why)
		}
		t.Logf("skipping the corpus (fixtures only): %s", why)
	} else {
		recorded := readRecorded(t, shared)
		root := filepath.Join(shared, "corpus", "real")
		dirs := bundleDirs(t, root)
		st.bundles = len(dirs)
		for _, k8s := range []string{"", "1.25"} {
			ours := opmHubFindings(t, dirs, k8s, nil)
			for _, dir := range dirs {
				rel, _ := filepath.Rel(root, dir)
				name := filepath.ToSlash(rel)
				for _, group := range []string{"suite=operatorframework", "operatorhub"} {
					rec, ok := recorded[group+"|"+k8s+"|"+name]
					if !ok {
						t.Errorf("%s: no recorded %s verdict with k8sVersion=%q", name, group, k8s)
						continue
					}
					where := fmt.Sprintf("%s (%s, k8s-version %q)", name, group, k8s)
					st.compare(t, where, group, rec.Passed, upstreamFindings(t, rec), ours[dir])
				}
			}
		}
	}
	total := 0
	for _, d := range hubDifferences {
		if st.explained[d.id] == 0 && shared != "" {
			t.Errorf("deliberate difference %s (%s) explains no difference any more: drop it here and in docs/validation.md", d.id, d.rule)
		}
		total += st.explained[d.id]
		t.Logf("deliberate difference %s: %d (%s: %s)", d.id, st.explained[d.id], d.rule, d.reason)
	}
	checkHubDocumented(t)
	t.Logf("operatorhub vs operator-framework/api v0.45.0: %d fixtures (live) and %d real bundles x 2 Kubernetes versions, each against 2 groups: verdicts %d agree, %d differ; rule by rule %d agree, %d deliberate differences (%d kinds)",
		fixtures, st.bundles, st.verdictAgree, st.verdictDiff, st.ruleAgree, total, len(hubDifferences))
}

// hubStats counts the comparisons of TestOperatorHubVerdicts.
type hubStats struct {
	bundles                              int
	verdictAgree, verdictDiff, ruleAgree int
	explained                            map[string]int
}

// compare compares one bundle's verdict and findings with one group's.
func (st *hubStats) compare(t *testing.T, where, group string, upstreamPassed bool, up, opm findings) {
	t.Helper()
	if upstreamPassed == opm.passed() {
		st.verdictAgree++
	} else {
		st.verdictDiff++
		t.Errorf("%s: operator-framework/api passed=%v, opm --select operatorhub passed=%v, and no deliberate difference lists it\nupstream: %v\nopm: %v",
			where, upstreamPassed, opm.passed(), up, opm)
	}
	for _, key := range unionKeys(up, opm) {
		rule, sev, _ := strings.Cut(key, " ")
		if !contains(groupRules[group], rule) {
			continue
		}
		u, o := up[key], opm[key]
		if (len(u) > 0) == (len(o) > 0) {
			st.ruleAgree++
			continue
		}
		if d := findDifference(rule, sev, len(o) > 0, u, o); d != nil {
			st.explained[d.id]++
			continue
		}
		side, msgs := "upstream alone", u
		if len(o) > 0 {
			side, msgs = "opm alone", o
		}
		t.Errorf("%s: %s reports %s (%s) and no deliberate difference explains it:\n  %s", where, side, rule, sev, strings.Join(msgs, "\n  "))
	}
}

func findDifference(rule, severity string, opmOnly bool, upstream, opm []string) *hubDifference {
	msgs := upstream
	if opmOnly {
		msgs = opm
	}
	for i := range hubDifferences {
		d := &hubDifferences[i]
		if d.rule == rule && d.severity == severity && d.opmOnly == opmOnly && d.applies(msgs) {
			return d
		}
	}
	return nil
}

// findings are one bundle's findings by "rule severity", with messages.
type findings map[string][]string

func (f findings) passed() bool {
	for key := range f {
		if strings.HasSuffix(key, " error") {
			return false
		}
	}
	return true
}

func unionKeys(a, b findings) []string {
	set := map[string]bool{}
	for k := range a {
		set[k] = true
	}
	for k := range b {
		set[k] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// upstreamFindings maps a recorded entry's messages to opm rules.
func upstreamFindings(t *testing.T, rec recordedEntry) findings {
	t.Helper()
	out := findings{}
	add := func(detail, sev string) {
		for _, m := range upstreamRules {
			if strings.Contains(detail, m.fragment) {
				if m.rule != "" {
					out[m.rule+" "+sev] = append(out[m.rule+" "+sev], detail)
				}
				return
			}
		}
		t.Errorf("%s (%s): upstream message maps to no opm rule: %s", rec.Bundle, rec.Group, detail)
	}
	for _, e := range rec.Errors {
		add(e.Detail, "error")
	}
	for _, w := range rec.Warnings {
		add(w.Detail, "warning")
	}
	return out
}

// opmHubFindings runs `opm bundle validate --select operatorhub -o json`
// once over every directory and returns each one's findings.
func opmHubFindings(t *testing.T, dirs []string, k8s string, env []string) map[string]findings {
	t.Helper()
	args := []string{"bundle", "validate", "--select", "operatorhub", "-o", "json"}
	if k8s != "" {
		args = append(args, "--k8s-version", k8s)
	}
	cmd := exec.Command(opmBinary, append(args, dirs...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "NO_COLOR=1"}, env...)
	out, err := cmd.Output()
	var exit *exec.ExitError
	if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
		t.Fatalf("opm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var res struct {
		Bundles []struct {
			Path     string `json:"path"`
			Findings []struct {
				Rule, Severity, Message string
			} `json:"findings"`
		} `json:"bundles"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("opm %s: %v", strings.Join(args, " "), err)
	}
	if len(res.Bundles) != len(dirs) {
		t.Fatalf("opm reported %d bundles for %d directories", len(res.Bundles), len(dirs))
	}
	byDir := map[string]findings{}
	for i, b := range res.Bundles {
		f := findings{}
		for _, x := range b.Findings {
			f[x.Rule+" "+x.Severity] = append(f[x.Rule+" "+x.Severity], x.Message)
		}
		byDir[dirs[i]] = f
	}
	return byDir
}

// readRecorded reads the optional groups' recorded verdicts, keyed
// "group|k8sVersion|bundle".
func readRecorded(t *testing.T, shared string) map[string]recordedEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(shared, "reference/api-verdicts/corpus.jsonl"))
	if err != nil {
		t.Fatalf("recorded verdicts: %v", err)
	}
	defer f.Close()
	out := map[string]recordedEntry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var rec recordedEntry
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("corpus.jsonl: %v", err)
		}
		if rec.Group == "suite=operatorframework" || rec.Group == "operatorhub" {
			out[rec.Group+"|"+rec.K8sVersion+"|"+rec.Bundle] = rec
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkHubDocumented fails when docs/validation.md's section on the
// OperatorHub validators does not give every deliberate difference.
func checkHubDocumented(t *testing.T) {
	t.Helper()
	data, err := os.ReadFile("../../docs/validation.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	const heading = "### Compared with operator-sdk's OperatorHub validators"
	start := strings.Index(doc, heading)
	if start < 0 {
		t.Fatalf("docs/validation.md lacks %q", heading)
	}
	section := doc[start+len(heading):]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	for _, d := range hubDifferences {
		if !strings.Contains(section, "`"+d.id+"`") {
			t.Errorf("docs/validation.md (%s) does not give the deliberate difference `%s`", heading, d.id)
		}
	}
}
