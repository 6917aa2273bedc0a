package rendertemplate

import (
	"context"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/semver"
)

// semverTemplate parses a semver template (internal/fbc/template/semver):
// the images it names, and how to render it with the run's renderer.
func semverTemplate(source string, data []byte) ([]string, func(context.Context, template.RenderBundle) (*fbc.Catalog, error), error) {
	t, err := semver.Parse(data, source)
	if err != nil {
		return nil, nil, err
	}
	return t.Images(), func(ctx context.Context, render template.RenderBundle) (*fbc.Catalog, error) {
		return t.Render(ctx, semver.Options{RenderBundle: render, Source: source})
	}, nil
}
