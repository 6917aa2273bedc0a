package yamldoc

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestYAMLFollowsKubernetes(t *testing.T) {
	docs, err := Decode("x.yaml", []byte("a: on\nb: \"on\"\nc: 2020-01-01\nd: 0x10\ne: =\nf: 1.0\non: x\n"))
	require.NoError(t, err)
	m := docs[0].Value.(map[string]any)
	assert.Equal(t, true, m["a"], "YAML 1.1 boolean, as kubectl reads it")
	assert.Equal(t, "on", m["b"])
	assert.Equal(t, "2020-01-01", m["c"], "timestamps stay strings")
	assert.Equal(t, int64(16), m["d"])
	assert.Equal(t, "=", m["e"])
	assert.Equal(t, 1.0, m["f"])
	assert.Equal(t, "x", m["true"])
	assert.Len(t, docs[0].Ambiguous, 3, "a, e and the key on")
}

func TestAliasBombIsRefused(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		sb.WriteString("a" + strconv.Itoa(i) + ": &a" + strconv.Itoa(i) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString("*a" + strconv.Itoa(i-1))
		}
		sb.WriteString("]\n")
	}
	// Expanded, the document would be 10^10 scalars: an error at all
	// (not an hour of work, or memory running out) is the refusal.
	_, err := Decode("bomb.yaml", []byte(sb.String()))
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expands to too many values")
}

func TestLineOf(t *testing.T) {
	docs, err := Decode("x.yaml", []byte("metadata:\n  annotations:\n    olm.skipRange: '<1.0.0'\nspec:\n  installModes:\n  - type: A\n  - type: B\n"))
	require.NoError(t, err)
	d := docs[0]
	assert.Equal(t, 7, d.LineOf("spec.installModes[1].type"))
	assert.Equal(t, 3, d.LineOf(`metadata.annotations["olm.skipRange"]`))
	assert.Equal(t, 5, d.LineOf("spec.installModes[9]"), "an unresolved path points at the deepest part found")
}
