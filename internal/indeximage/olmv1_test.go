package indeximage

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/validate"
)

// TestOLMv1Findings: only an image without the configs label is refused,
// naming the image and the label; a database label is said when present.
func TestOLMv1Findings(t *testing.T) {
	t.Parallel()
	assert.Empty(t, OLMv1Findings("r/fbc:1", map[string]string{ConfigsLabel: "/configs"}))
	assert.Empty(t, OLMv1Findings("r/both:1", map[string]string{ConfigsLabel: "/configs", DatabaseLabel: "/database/index.db"}))

	fs := OLMv1Findings("r/sqlite:1", map[string]string{DatabaseLabel: "/database/index.db"})
	require.Len(t, fs, 1)
	f := fs[0]
	assert.Equal(t, validate.RuleOLMv1CatalogImage.ID, f.Rule)
	assert.Equal(t, validate.Error, f.Severity)
	for _, want := range []string{"r/sqlite:1", ConfigsLabel, "sqlite index image", DatabaseLabel + "=/database/index.db"} {
		assert.Contains(t, f.Message, want)
	}
	assert.Contains(t, f.Hint, "--catalog-format fbc")
	assert.Contains(t, f.Hint, "opm generate dockerfile")

	fs = OLMv1Findings("r/none:1", map[string]string{ConfigsLabel: ""})
	require.Len(t, fs, 1)
	assert.NotContains(t, fs[0].Message, "sqlite")
}

// TestOLMv1RuleSelection: the set runs only when selected, by name or rule.
func TestOLMv1RuleSelection(t *testing.T) {
	t.Parallel()
	assert.False(t, validate.Options{}.EnabledSet(validate.SetOLMv1), "opt-in")
	assert.True(t, validate.Options{Select: []string{validate.SetOLMv1}}.EnabledSet(validate.SetOLMv1))
	assert.True(t, validate.Options{Select: []string{"olmv1-catalog-image"}}.EnabledSet(validate.SetOLMv1))
	assert.False(t, validate.Options{Select: []string{validate.SetOLMv1}, Skip: []string{validate.SetOLMv1}}.EnabledSet(validate.SetOLMv1))
}
