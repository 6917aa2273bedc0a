package validate

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"

	"github.com/opmkit/opm/internal/shareddata"
)

// sharedDir is ../shared beside the checkout; tests that read it skip, with
// the reason printed, when it is absent (and fail under CI=true).
func sharedDir(t testing.TB) string {
	t.Helper()
	shareddata.Require(t, "corpus")
	return shareddata.Root()
}

func dirInputs(dirs []string) []Input {
	var in []Input
	for _, d := range dirs {
		in = append(in, Input{Path: d, Load: func(context.Context) (*bundle.Bundle, error) { return bundle.LoadDir(d) }})
	}
	return in
}

func realBundles(t testing.TB, shared string) []string {
	matches, err := filepath.Glob(filepath.Join(shared, "corpus/real/*/*"))
	require.NoError(t, err)
	var dirs []string
	for _, m := range matches {
		if st, err := os.Stat(m); err == nil && st.IsDir() {
			dirs = append(dirs, m)
		}
	}
	return dirs
}

var loadRules = map[string]bool{"yaml-syntax": true, "bundle-no-csv": true, "bundle-multiple-csvs": true, "bundle-load": true}

// sdkMisses are the error rules opm reports on the real corpus that
// operator-sdk does not, each with the reason it is right to (docs/validation.md
// says the same; TestRules pins each rule with a fixture).
var sdkMisses = map[string]string{
	"annotations-default-channel": "default channel not among the bundle's channels: an index built with it as head has a dangling default channel",
	"manifest-object":             "an object without apiVersion cannot be created by OLM",
}

func TestCorpusAgainstOperatorSDK(t *testing.T) {
	shared := sharedDir(t)
	dirs := realBundles(t, shared)
	require.Len(t, dirs, 181, "the real corpus has 181 bundles")
	res := Run(context.Background(), dirInputs(dirs), Options{})

	ours := map[string]BundleReport{}
	for _, br := range res.Bundles {
		rel, err := filepath.Rel(shared, br.Path)
		require.NoError(t, err)
		ours[filepath.ToSlash(rel)] = br
		for _, f := range br.Findings {
			assert.False(t, loadRules[f.Rule], "%s failed to load: %s", rel, f.Message)
		}
	}

	f, err := os.Open(filepath.Join(shared, "reference/sdk-bundle-validate.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	sdkErrors := map[string]map[string]int{} // bundle -> our rule -> count
	n := 0
	for sc.Scan() {
		var rec struct {
			Bundle  string `json:"bundle"`
			Outputs []struct {
				Type    string `json:"type"`
				Message string `json:"message"`
			} `json:"outputs"`
		}
		require.NoError(t, json.Unmarshal(sc.Bytes(), &rec))
		n++
		for _, o := range rec.Outputs {
			if o.Type != "error" {
				continue
			}
			var rule string
			switch {
			case strings.Contains(o.Message, "spec.preserveUnknownFields"):
				rule = "crd-preserve-unknown-fields"
			case strings.Contains(o.Message, "invalid service account found in bundle"):
				rule = "bundle-service-account-conflict"
			default:
				t.Errorf("%s: operator-sdk error with no opm counterpart: %s", rec.Bundle, o.Message)
				continue
			}
			if sdkErrors[rec.Bundle] == nil {
				sdkErrors[rec.Bundle] = map[string]int{}
			}
			sdkErrors[rec.Bundle][rule]++
		}
	}
	require.NoError(t, sc.Err())
	require.Equal(t, 181, n)

	for b, rules := range sdkErrors {
		br, ok := ours[b]
		require.True(t, ok, "bundle %s not validated", b)
		for rule, want := range rules {
			got := 0
			for _, f := range br.Findings {
				if f.Rule == rule && f.Severity == Error {
					got++
				}
			}
			assert.Equal(t, want, got, "%s: operator-sdk reports %d errors that are %s; opm %d", b, want, rule, got)
		}
	}
	for b, br := range ours {
		for _, f := range br.Findings {
			if f.Severity != Error || sdkErrors[b][f.Rule] > 0 {
				continue
			}
			_, explained := sdkMisses[f.Rule]
			assert.True(t, explained, "%s: opm error %s that operator-sdk misses is not explained in sdkMisses: %s", b, f.Rule, f.Message)
		}
	}
}

// TestEdgeCorpus checks that each case of ../shared/corpus/edge gets the
// specific finding its MANIFEST.md describes.
func TestEdgeCorpus(t *testing.T) {
	shared := sharedDir(t)
	edge := filepath.Join(shared, "corpus/edge")
	cases := []struct {
		dirs  []string
		rule  string
		sev   Severity
		file  string
		field string
		msg   string
	}{
		{[]string{"E01-no-manifests-dir/gitlab-runner-operator/1.23.1"}, "bundle-nested", Warning, "certification/", "", "subdirectory certification/"},
		{[]string{"E02-bundle-nested-in-subdir/rabbitmq-messaging-topology-operator/1.19.1"}, "bundle-nested", Warning, "bundle/", "", "subdirectory bundle/"},
		{[]string{"E04-invalid-installmode-type/percona-server-mongodb-operator/1.18.0"}, "csv-install-modes", Error, "manifests/percona-server-mongodb-operator.clusterserviceversion.yaml", "spec.installModes[0].type", `unknown install mode type "OwnNamespacejl"`},
		{[]string{"E05-replaces-bare-version/datadog-operator/1.3.0"}, "csv-replaces", Error, "manifests/datadog-operator.clusterserviceversion.yaml", "spec.replaces", `"1.2.1" is a bare version`},
		{[]string{"E06-duplicate-csv-name/slurm-operator/0.4.0", "E06-duplicate-csv-name/slurm-operator/0.4.1"}, "package-duplicate-csv", Error, "", "metadata.name", `CSV name "slurm-operator.v0.4.0" is also used by`},
		{[]string{"E09-yaml11-equals-scalar-in-crd/observability-operator/0.0.22"}, "yaml-ambiguous-scalar", Warning, "manifests/monitoring.rhobs_alertmanagerconfigs.yaml", "", `plain "="`},
		{[]string{"E12-crd-not-owned-and-default-channel-elsewhere/infinispan/2.0.0"}, "crd-not-owned", Error, "manifests/infinispan.org_caches_crd.yaml", "metadata.name", "caches.infinispan.org is in the bundle but the CSV does not own it"},
		{[]string{"E12-crd-not-owned-and-default-channel-elsewhere/infinispan/2.0.0"}, "annotations-default-channel", Error, "metadata/annotations.yaml", "", `default channel "2.1.x" is not one of the bundle's channels (preview)`},
		{[]string{"E13-multidoc-manifest-file/community-trivy-operator/2.4.0"}, "manifest-multi-document", Error, "manifests/trivy-operator.service.yaml", "", "holds 2 objects"},
		{[]string{"E13-multidoc-manifest-file/community-trivy-operator/2.4.0"}, "annotations-default-channel", Info, "metadata/annotations.yaml", "", "no default channel annotation"},
	}
	for _, tc := range cases {
		t.Run(tc.dirs[0]+"/"+tc.rule, func(t *testing.T) {
			var dirs []string
			for _, d := range tc.dirs {
				dirs = append(dirs, filepath.Join(edge, d))
			}
			res := Run(context.Background(), dirInputs(dirs), Options{})
			var found bool
			for _, br := range res.Bundles {
				for _, f := range br.Findings {
					assert.False(t, loadRules[f.Rule], "%s: load failure %s", br.Path, f.Message)
					if f.Rule == tc.rule && strings.Contains(f.Message, tc.msg) {
						found = true
						assert.Equal(t, tc.sev, f.Severity)
						if tc.file != "" {
							assert.Equal(t, tc.file, f.File)
						}
						if tc.field != "" {
							assert.Equal(t, tc.field, f.Field)
						}
					}
				}
			}
			assert.True(t, found, "no %s finding containing %q in %+v", tc.rule, tc.msg, res.Bundles)
		})
	}
}

// BenchmarkValidateCorpus validates all 181 real bundles in one process, as
// `opm bundle validate ../shared/corpus/real/*/*/` does.
func BenchmarkValidateCorpus(b *testing.B) {
	shared := sharedDir(b)
	in := dirInputs(realBundles(b, shared))
	b.ResetTimer()
	for range b.N {
		Run(context.Background(), in, Options{})
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/181-bundles")
}
