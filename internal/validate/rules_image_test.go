package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/bundle"
)

// validLabels are the labels `opm bundle build` gives testdata/valid.
func validLabels(t testing.TB, b *bundle.Bundle) map[string]string {
	t.Helper()
	require.NotNil(t, b.Annotations)
	labels := map[string]string{"io.buildah.version": "1.28.2"} // extra labels are fine
	for k, v := range b.Annotations.Values {
		labels[k] = v
	}
	return labels
}

func TestImageLabels(t *testing.T) {
	load := func(t *testing.T) *bundle.Bundle {
		b, err := bundle.Load(validFS(t))
		require.NoError(t, err)
		return b
	}
	byRule := func(rep BundleReport) []Finding {
		var out []Finding
		for _, f := range rep.Findings {
			if f.Rule == "image-labels" {
				out = append(out, f)
			}
		}
		return out
	}

	t.Run("directory: no labels, no check", func(t *testing.T) {
		b := load(t)
		assert.Empty(t, Check("dir", b, nil, Options{}).Findings)
	})

	t.Run("matching labels", func(t *testing.T) {
		b := load(t)
		b.Labels = validLabels(t, b)
		assert.Empty(t, Check("img", b, nil, Options{}).Findings)
	})

	t.Run("mismatch names both values", func(t *testing.T) {
		b := load(t)
		b.Labels = validLabels(t, b)
		b.Labels[bundle.AnnotationPackage] = "gadget-operator"
		fs := byRule(Check("img", b, nil, Options{}))
		require.Len(t, fs, 1)
		f := fs[0]
		assert.Equal(t, Error, f.Severity)
		assert.Equal(t, annFile, f.File)
		assert.Equal(t, 5, f.Line)
		assert.Equal(t, `annotations["`+bundle.AnnotationPackage+`"]`, f.Field)
		assert.Contains(t, f.Message, `"gadget-operator"`)
		assert.Contains(t, f.Message, `"widget-operator"`)
		assert.Contains(t, f.Message, "annotations win")
		assert.Contains(t, f.Hint, "opm bundle build")
	})

	t.Run("missing core label is an error, other keys a warning", func(t *testing.T) {
		b := load(t)
		b.Annotations.Values["operators.operatorframework.io.metrics.builder"] = "operator-sdk-v1.0.0"
		b.Labels = map[string]string{}
		for _, k := range imageLabelKeys {
			b.Labels[k] = b.Annotations.Values[k]
		}
		delete(b.Labels, bundle.AnnotationChannels)
		fs := byRule(Check("img", b, nil, Options{}))
		require.Len(t, fs, 2)
		assert.Equal(t, Error, fs[0].Severity)
		assert.Contains(t, fs[0].Message, "no label "+bundle.AnnotationChannels)
		assert.Equal(t, Warning, fs[1].Severity)
		assert.Contains(t, fs[1].Message, "metrics.builder")
	})

	t.Run("skipped", func(t *testing.T) {
		b := load(t)
		b.Labels = map[string]string{}
		assert.Empty(t, byRule(Check("img", b, nil, Options{Skip: []string{"image-labels"}})))
	})
}
