package rendertemplate_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/opmkit/opm/internal/cmd/exit"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template/semver"
)

// TestRenderTemplateSemver renders a semver template through the command:
// the catalog internal/fbc/template/semver makes of the bundles opm render
// gives for the images, detected by schema or named, from a file or stdin.
func TestRenderTemplateSemver(t *testing.T) {
	t.Parallel()
	f := bundles(t)
	data := fmt.Sprintf("schema: olm.semver\ngenerateMajorChannels: true\ngenerateMinorChannels: true\ncandidate:\n  bundles:\n  - image: %s\nstable:\n  bundles:\n  - image: %s\n  - image: %s\n",
		f.refs["example-operator.v0.3.0"], f.refs["example-operator.v0.1.0"], f.refs["example-operator.v0.2.0"])
	file := writeFile(t, "semver.yaml", data)

	byImage := map[string]*fbc.Bundle{}
	rendered := f.rendered(t, "", "example-operator.v0.1.0", "example-operator.v0.2.0", "example-operator.v0.3.0")
	for i := range rendered.Bundles {
		byImage[rendered.Bundles[i].Image] = &rendered.Bundles[i]
	}
	want, err := semver.Render(context.Background(), []byte(data), semver.Options{Source: file, RenderBundle: func(_ context.Context, image string) (*fbc.Bundle, error) {
		b, ok := byImage[image]
		if !ok {
			return nil, fmt.Errorf("no %s", image)
		}
		c := *b
		return &c, nil
	}})
	require.NoError(t, err)
	var wantJSON bytes.Buffer
	require.NoError(t, fbc.Write(&wantJSON, want, fbc.FormatJSON))

	for _, args := range [][]string{{"semver", file}, {file}} {
		r := f.run(t, append([]string{"alpha", "render-template"}, args...)...)
		require.Equal(t, 0, r.Code, r.ErrOut)
		assert.Equal(t, wantJSON.String(), r.Out, "%v", args)
	}
	r := runStdin(t, data, "alpha", "render-template", "--use-http")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Equal(t, wantJSON.String(), r.Out)
	for _, ch := range []string{`"name": "stable-v0.1"`, `"name": "stable-v0"`, `"name": "candidate-v0.3"`} {
		assert.Contains(t, r.Out, ch)
	}

	r = f.run(t, "alpha", "render-template", file, "-o", "mermaid")
	require.Equal(t, 0, r.Code, r.ErrOut)
	assert.Contains(t, r.Out, "graph LR\n")
	assert.Regexp(t, `subgraph c\d+\["stable-v0"\]`, r.Out)

	// Errors name the file, line and field; nothing is printed.
	bad := writeFile(t, "bad.yaml", "schema: olm.semver\nstable:\n  bundles:\n  - image: "+f.refs["example-operator.v0.1.0"]+"\n    imagee: x\n")
	r = f.run(t, "alpha", "render-template", bad)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	assert.Contains(t, r.ErrOut, bad+":5")
	assert.Contains(t, r.ErrOut, "imagee")
	missing := writeFile(t, "missing.yaml", "schema: olm.semver\nstable:\n  bundles:\n  - image: "+f.reg.Ref("nothing:1")+"\n")
	r = f.run(t, "alpha", "render-template", "semver", missing)
	assert.Equal(t, exit.Failed, r.Code, r.ErrOut)
	assert.Empty(t, r.Out)
	assert.Contains(t, r.ErrOut, missing+":4")
	assert.Contains(t, r.ErrOut, "cannot be pulled")
}
