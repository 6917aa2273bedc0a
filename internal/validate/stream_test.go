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
