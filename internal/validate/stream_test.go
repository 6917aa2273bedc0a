package validate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

// corpusGolden pins the findings of one run over the whole shared corpus
// (real and edge bundles together): the SHA-256 of its -o json document,
// then a count of findings per rule and severity, so that a change shows
// where it is. Regenerate with OPM_UPDATE_GOLDEN=1 after a deliberate
// change to a rule.
const corpusGolden = "testdata/corpus-findings.golden"

// corpusInputs are every bundle of ../shared/corpus, real and edge, as
// directory inputs named by their path relative to the shared directory.
func corpusInputs(t testing.TB, shared string) []Input {
	var dirs []string
	for _, pattern := range []string{"corpus/real/*/*", "corpus/edge/*/*/*"} {
		matches, err := filepath.Glob(filepath.Join(shared, pattern))
		require.NoError(t, err)
		for _, m := range matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				dirs = append(dirs, m)
			}
		}
	}
	require.Len(t, dirs, 190, "the shared corpus has 181 real and 9 edge bundles")
	var in []Input
	for _, d := range dirs {
		rel, err := filepath.Rel(shared, d)
		require.NoError(t, err)
		in = append(in, Input{Path: filepath.ToSlash(rel), Load: func(context.Context) (*bundle.Bundle, error) { return bundle.LoadDir(d) }})
	}
	return in
}

func goldenOf(t *testing.T, res *Result) string {
	var doc bytes.Buffer
	require.NoError(t, WriteJSON(&doc, res))
	sum := sha256.Sum256(doc.Bytes())
	counts := map[string]int{}
	for _, br := range res.Bundles {
		for _, f := range br.Findings {
			counts[f.Rule+" "+f.Severity.String()]++
		}
	}
	var lines []string
	for k, n := range counts {
		lines = append(lines, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(lines)
	return "sha256 " + hex.EncodeToString(sum[:]) + "\n" + strings.Join(lines, "\n") + "\n"
}

// TestCorpusFindingsUnchanged checks that Run reports exactly the findings
// pinned in corpusGolden, which were computed by the implementation that
// kept every bundle until the end (before Run streamed).
func TestCorpusFindingsUnchanged(t *testing.T) {
	shared := sharedDir(t)
	got := goldenOf(t, Run(context.Background(), corpusInputs(t, shared), Options{}))
	if os.Getenv("OPM_UPDATE_GOLDEN") != "" {
		require.NoError(t, os.WriteFile(corpusGolden, []byte(got), 0o644))
		t.Logf("wrote %s", corpusGolden)
		return
	}
	want, err := os.ReadFile(corpusGolden)
	require.NoError(t, err)
	assert.Equal(t, string(want), got, "findings over the shared corpus changed; after a deliberate rule change, regenerate with OPM_UPDATE_GOLDEN=1")
}

// referenceRun is the plain, non-streaming way to validate: load every
// bundle, check each, then run the package rules over each package's
// bundles at once, keeping everything until the end (what Run did before it
// was built on Stream).
func referenceRun(inputs []Input, opts Options) *Result {
	reports := make([]BundleReport, len(inputs))
	groups := map[string][]*Member{}
	var order []string
	byMember := map[*Member]*BundleReport{}
	for i, in := range inputs {
		b, err := in.Load(context.Background())
		reports[i] = Check(in.Path, b, err, opts)
		if b == nil || b.CSV == nil {
			continue
		}
		m := newMember(i, in.Path, b)
		if _, ok := groups[b.Package()]; !ok {
			order = append(order, b.Package())
		}
		groups[b.Package()] = append(groups[b.Package()], m)
		byMember[m] = &reports[i]
	}
	for _, pkg := range order {
		checkPackage(pkg, groups[pkg], byMember, opts)
	}
	return NewResult(reports, opts.FailOn)
}

// withPeek gives each input the package look-up DirInput gives a directory.
func withPeek(t testing.TB, shared string, in []Input) []Input {
	out := make([]Input, len(in))
	for i, x := range in {
		dir := filepath.Join(shared, filepath.FromSlash(x.Path))
		x.Package = func(context.Context) string { return bundle.PeekPackageDir(dir, bundle.LoadOptions{}) }
		out[i] = x
	}
	return out
}

// interleave deals inputs round-robin into k piles and concatenates them,
// so that the bundles of one package are spread over the whole list.
func interleave(in []Input, k int) []Input {
	var out []Input
	for start := range k {
		for i := start; i < len(in); i += k {
			out = append(out, in[i])
		}
	}
	return out
}

func reversed(in []Input) []Input {
	out := make([]Input, len(in))
	for i, x := range in {
		out[len(in)-1-i] = x
	}
	return out
}

// cachedLoads makes each input load its bundle once and hand the same one
// out afterwards, so that comparing many runs does not reload the corpus
// each time (rules only read a bundle).
func cachedLoads(in []Input) []Input {
	out := make([]Input, len(in))
	for i, x := range in {
		var once sync.Once
		var b *bundle.Bundle
		var err error
		load := x.Load
		x.Load = func(ctx context.Context) (*bundle.Bundle, error) {
			once.Do(func() { b, err = load(ctx) })
			return b, err
		}
		out[i] = x
	}
	return out
}

// TestStreamMatchesReference runs the whole corpus through Run (so Stream)
// in several orders, with and without the package look-up, at several
// concurrencies, and compares with referenceRun: same reports, same order.
func TestStreamMatchesReference(t *testing.T) {
	shared := sharedDir(t)
	base := cachedLoads(corpusInputs(t, shared))
	cases := []struct {
		name string
		in   []Input
		peek bool
		conc int
	}{
		{"given", base, true, 3},
		{"given", base, false, 1},
		{"reversed", reversed(base), true, 3},
		{"interleaved-7", interleave(base, 7), true, 1},
		{"interleaved-50", interleave(base, 50), false, 3},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/peek=%v/concurrency=%d", tc.name, tc.peek, tc.conc), func(t *testing.T) {
			want := referenceRun(tc.in, Options{})
			inputs := tc.in
			if tc.peek {
				inputs = withPeek(t, shared, tc.in)
			}
			got := Run(context.Background(), inputs, Options{Concurrency: tc.conc})
			require.Equal(t, want, got)
		})
	}
	// The reference is today's implementation's result too.
	want, err := os.ReadFile(corpusGolden)
	require.NoError(t, err)
	assert.Equal(t, string(want), goldenOf(t, referenceRun(base, Options{})))
}

// TestStreamEmitsPackagesAsTheyFinish checks that Stream emits each package
// once, in the order of its first input, with every input in exactly one
// report, and that it does so before loading the next packages' bundles.
func TestStreamEmitsPackagesAsTheyFinish(t *testing.T) {
	shared := sharedDir(t)
	inputs := withPeek(t, shared, corpusInputs(t, shared))
	var loads atomic.Int64
	for i := range inputs {
		load := inputs[i].Load
		inputs[i].Load = func(ctx context.Context) (*bundle.Bundle, error) { loads.Add(1); return load(ctx) }
	}
	seen := map[int]bool{}
	packages := map[string]bool{}
	lastFirst := -1
	var emitted int
	// One at a time, so that the count of loads is exact.
	Stream(context.Background(), inputs, Options{Concurrency: 1}, func(p PackageReport) {
		require.NotEmpty(t, p.Bundles)
		require.Len(t, p.Inputs, len(p.Bundles))
		if p.Package != "" {
			assert.False(t, packages[p.Package], "package %s emitted twice", p.Package)
			packages[p.Package] = true
		}
		assert.Greater(t, p.Inputs[0], lastFirst, "packages come in the order of their first input")
		lastFirst = p.Inputs[0]
		for k, i := range p.Inputs {
			assert.False(t, seen[i], "input %d emitted twice", i)
			seen[i] = true
			assert.Equal(t, inputs[i].Path, p.Bundles[k].Path)
			if k > 0 {
				assert.Greater(t, i, p.Inputs[k-1], "reports keep the inputs' order")
			}
		}
		emitted += len(p.Bundles)
		// Every corpus bundle names its package in its annotations, so no
		// bundle of a later package is loaded before this one is emitted,
		// but for the one the single worker may have started meanwhile.
		n := int(loads.Load())
		assert.LessOrEqual(t, n, emitted+1, "package %s emitted after %d loads, though only %d bundles were emitted", p.Package, n, emitted)
	})
	assert.Len(t, seen, len(inputs))
	assert.Equal(t, len(inputs), int(loads.Load()))
	assert.Len(t, packages, 21, "the corpus's 13 real and 8 edge packages")
}

// TestTextWriterMatchesWriteText streams the whole corpus into a TextWriter
// package by package and checks the text equals WriteText's over Run's
// result, at both --fail-on levels (the order is the same: the corpus is
// given package by package).
func TestTextWriterMatchesWriteText(t *testing.T) {
	shared := sharedDir(t)
	inputs := withPeek(t, shared, corpusInputs(t, shared))
	res := Run(context.Background(), inputs, Options{})
	for _, failOn := range []Severity{Error, Info} {
		opts := TextOptions{FailOn: failOn, Styles: Styles{Failed: func(s string) string { return "<" + s + ">" }}}
		var want, got bytes.Buffer
		whole := NewResult(res.Bundles, failOn)
		require.NoError(t, WriteText(&want, whole, opts))
		tw := NewTextWriter(&got, opts)
		var packages int
		Stream(context.Background(), inputs, Options{FailOn: failOn}, func(p PackageReport) {
			packages++
			require.NoError(t, tw.Write(p.Bundles))
		})
		require.NoError(t, tw.Close())
		assert.Equal(t, want.String(), got.String())
		assert.Equal(t, whole.Passed, tw.Passed())
		assert.Greater(t, packages, 20)
	}
}
