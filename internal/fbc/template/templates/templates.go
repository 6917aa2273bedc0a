// Package templates parses a catalog template of any type (basic, semver,
// substitutes) into what rendering it needs: the bundle images it names
// and the function that renders it.
package templates

import (
	"context"
	"fmt"

	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
	"github.com/opmkit/opm/internal/fbc/template/basic"
	"github.com/opmkit/opm/internal/fbc/template/semver"
	"github.com/opmkit/opm/internal/fbc/template/substitutes"
)

// RenderFunc renders a parsed template, its bundles through render.
type RenderFunc func(context.Context, template.RenderBundle) (*fbc.Catalog, error)

// Parsed is a template ready to render.
type Parsed struct {
	// Images are the bundle images it names, in its order.
	Images []string
	Render RenderFunc
}

// Parse parses a template of type typ (template.TypeBasic, ...) read
// from source.
func Parse(typ, source string, data []byte) (*Parsed, error) {
	switch typ {
	case template.TypeBasic:
		t, err := basic.Parse(source, data)
		if err != nil {
			return nil, err
		}
		return &Parsed{Images: t.Images(), Render: t.Render}, nil
	case template.TypeSubstitutes:
		t, err := substitutes.Parse(source, data)
		if err != nil {
			return nil, err
		}
		return &Parsed{Images: t.Images(), Render: t.Render}, nil
	case template.TypeSemver:
		t, err := semver.Parse(data, source)
		if err != nil {
			return nil, err
		}
		return &Parsed{Images: t.Images(), Render: func(ctx context.Context, render template.RenderBundle) (*fbc.Catalog, error) {
			return t.Render(ctx, semver.Options{RenderBundle: render, Source: source})
		}}, nil
	}
	return nil, fmt.Errorf("%s: unknown template type %q", source, typ)
}
