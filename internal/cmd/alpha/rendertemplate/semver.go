package rendertemplate

import (
	"context"
	"fmt"
	"strings"

	"github.com/opmkit/opm/internal/bundle"
	"github.com/opmkit/opm/internal/fbc"
	"github.com/opmkit/opm/internal/fbc/template"
)

// semverImages lists the bundle images of a semver template (its
// candidate, fast and stable bundles), for fetching them all at once
// before the template asks for them one by one. Keys are matched as
// upstream's decoder matches them, ignoring case. A template that cannot
// be read yields none: rendering reports why.
func semverImages(data []byte, source string) []string {
	d, err := template.Parse(source, data)
	if err != nil {
		return nil
	}
	var out []string
	for k, v := range d.Value {
		switch strings.ToLower(k) {
		case "candidate", "fast", "stable":
		default:
			continue
		}
		m, _ := v.(map[string]any)
		for bk, bv := range m {
			if !strings.EqualFold(bk, "bundles") {
				continue
			}
			list, _ := bv.([]any)
			for _, item := range list {
				im, _ := item.(map[string]any)
				for ik, iv := range im {
					if s, ok := iv.(string); ok && strings.EqualFold(ik, "image") && s != "" {
						out = append(out, s)
					}
				}
			}
		}
	}
	return out
}

// semverRenderer renders a semver template.
func semverRenderer(source string, data []byte, _ bool) (func(context.Context, template.RenderBundle) (*fbc.Catalog, error), error) {
	_ = bundle.AnnotationMediaType
	return nil, fmt.Errorf("%s: semver templates are not available in this build yet", source)
}
